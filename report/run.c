// SPDX-License-Identifier: MIT
/*
 * run.c: stkreport after option parsing: load every capture given, then one of: --sql/--sqlite
 * (sql.c), --pprof (emit_pprof.c), --diff (diff.c), --svg (emit_svg.c), or the stack output the
 * options pick over all captures merged (emit_*.c); summarise each capture, and name any damage
 * once per file, where the file and offset are known.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "report.h"

/*
 * The reader refuses a newer major version before telling us which one; the version sits at a
 * frozen place of the file header (format.md 2: magic[8], major u16 LE, minor u16 LE).
 */
static void print_newer(const char *path)
{
	unsigned char h[12];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, h, sizeof(h));
		close(fd);
	}
	if (n == (ssize_t)sizeof(h))
		fprintf(stderr, "stkreport: %s: capture format %u.%u is newer than this stkreport "
			"(%d.x)\n", path, h[8] | h[9] << 8, h[10] | h[11] << 8, CAP_MAJOR);
	else
		fprintf(stderr,
			"stkreport: %s: capture format is newer than this stkreport (%d.x)\n", path,
			CAP_MAJOR);
}

static int open_error(const char *path, int err)
{
	struct stat st;

	switch (err) {
	case EINVAL:
		fprintf(stderr, "stkreport: %s: not a capture file (bad magic)\n", path);
		break;
	case ENODATA:
		if (!stat(path, &st) && !st.st_size)
			fprintf(stderr, "stkreport: %s: empty file: nothing was recorded into it\n",
				path);
		else
			fprintf(stderr, "stkreport: %s: not a capture file (shorter than its header)"
				"\n", path);
		break;
	case ENOTSUP:
		print_newer(path);
		break;
	case EBADMSG:
		fprintf(stderr, "stkreport: %s: file header: %s\n", path, strerror(err));
		break;
	default:
		fprintf(stderr, "stkreport: %s: %s\n", path, strerror(err));
	}
	return -err;
}

/* Warning or error for a capture whose walk ended early. Returns the exit error. */
static int report_damage(const char *path, const struct rep_capture *c, const struct rep_opts *o)
{
	switch (c->how) {
	case REP_END_UNCLOSED:
		/* chunks end on a boundary after kill -9: said even with -q, as a truncation is */
		fprintf(stderr, "stkreport: %s: not closed, ends after interval %u "
			"(the recorder was killed or its disk filled)\n", path, c->nseqs);
		return 0;
	case REP_END_TRUNCATED:
		/* expected after kill -9 or a full disk: what was read is a valid report */
		fprintf(stderr,
			"stkreport: %s: truncated after interval %u (chunk %u at 0x%llx)\n", path,
			c->nseqs, c->err_chunk, (unsigned long long)c->err_offset);
		return 0;
	case REP_END_ERROR:
		if (c->err == -EFBIG)
			/* what was read before it is reported, as before damage */
			fprintf(stderr, "stkreport: %s: chunk %u at 0x%llx: decoded data exceed the %u "
				"MiB budget (--max-memory)\n", path, c->err_chunk,
				(unsigned long long)c->err_offset, o->max_memory_mb);
		else
			fprintf(stderr, "stkreport: %s: chunk %u at 0x%llx: %s\n", path, c->err_chunk,
				(unsigned long long)c->err_offset, strerror(-c->err));
		return c->err;
	default:
		return 0;
	}
}

/* Load every capture given; a file that cannot be opened at all ends the run. */
static int load_all(const struct rep_opts *o, struct rep_capture **caps)
{
	int i;

	for (i = 0; i < o->ninputs; i++) {
		caps[i] = rep_capture__load(o->inputs[i], o->memory);
		if (!caps[i])
			return open_error(o->inputs[i], errno);
	}
	return 0;
}

/* The stack outputs: the emitter the options pick, over every capture merged. */
static int run_emitter(const struct rep_opts *o, struct rep_capture **caps, struct rep_model *m)
{
	const struct emitter *e = rep_pick_emitter(o, caps[0]);
	int err;

	err = rep_emit_many(stdout, (const struct rep_capture *const *)caps, o->inputs,
			    o->ninputs, o, e, m);
	if (err)
		fprintf(stderr, "stkreport: %s: %s\n", err == -EIO ? "standard output" : o->input,
			strerror(-err));
	return err;
}

static int run_svg(const struct rep_opts *o, struct rep_capture **caps, struct rep_model *m)
{
	int err = emit_svg(NULL, o->svg_out, (const struct rep_capture *const *)caps, o->inputs,
				o->ninputs, o, m);

	if (err)
		fprintf(stderr, "stkreport: %s: %s\n", o->svg_out, cap_output_strerror(err));
	return err;
}

/*
 * Budgets refused after loading (symbol tables, copies of embedded objects for DWARF; the
 * frames are unnamed, with the reason "over the memory budget"), and debug data left unread:
 * said once for the run. Returns the exit error.
 */
static int report_budgets(const struct rep_opts *o, uint64_t refused_at_load)
{
	if (o->debug && o->debug->skipped)
		/* a warning: the frames keep their names, the report is right as far as it goes */
		fprintf(stderr, "stkreport: debug data of %u objects not read: over the %u MiB budget "
			"(--max-debug)\n", o->debug->skipped, o->max_debug_mb);
	if (o->memory && o->memory->refused > refused_at_load) {
		fprintf(stderr, "stkreport: symbol tables exceed the %u MiB budget (--max-memory)\n",
			o->max_memory_mb);
		return -EFBIG;
	}
	return 0;
}

int rep_run(const struct rep_opts *opts)
{
	struct cap_budget memory = { .limit = (uint64_t)opts->max_memory_mb << 20 };
	struct sym_debug_budget debug = { .limit = (uint64_t)opts->max_debug_mb << 20 };
	struct rep_opts run_opts = *opts;
	const struct rep_opts *o = &run_opts;
	struct rep_model m = { 0 };
	struct rep_capture **caps;
	uint64_t refused_at_load;
	int err, i;

	run_opts.memory = &memory;
	run_opts.debug = &debug;
	caps = calloc(o->ninputs, sizeof(*caps));
	if (!caps) {
		fprintf(stderr, "stkreport: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = load_all(o, caps);
	if (err)
		goto out;
	refused_at_load = memory.refused;
	if (o->sql || o->sqlite_out)
		err = rep_sql_run(stdout, caps, o->inputs, o->ninputs, o);
	else if (o->pprof_out)
		err = rep_pprof_write(o->pprof_out, caps, o->ninputs, o);
	else if (o->diff)
		err = rep_diff_run(caps, o->inputs, o, &m);
	else if (o->svg_out)
		err = run_svg(o, caps, &m);
	else
		err = run_emitter(o, caps, &m);
	if (err)
		goto out;
	if (!o->quiet) {
		/* --diff printed its own summary of the two captures */
		for (i = 0; i < o->ninputs && !o->diff; i++)
			rep_summary(stderr, o->inputs[i], caps[i], o->ninputs == 1 ? &m : NULL);
		if (o->ninputs > 1 && !o->diff)
			rep_summary_unnamed(stderr, &m);
		if (!o->sql && !o->sqlite_out && !o->pprof_out && !o->diff)
			rep_summary_filtered(stderr, o, caps, o->ninputs, &m);
	}
	/* every damaged capture is named; the first error decides the exit status */
	for (i = 0; i < o->ninputs; i++) {
		int e = report_damage(o->inputs[i], caps[i], o);

		if (e && !err)
			err = e;
	}
	i = report_budgets(o, refused_at_load);
	if (i && !err)
		err = i;
out:
	rep_model__clear(&m);
	for (i = 0; i < o->ninputs; i++)
		rep_capture__free(caps[i]);
	free(caps);
	return err;
}

/* SQL the fuzzer runs: views over every table, names and comms in the three printers. */
static const char fuzz_sql_table[] =
	"SELECT function, kernel, self, total FROM functions ORDER BY total DESC, function, kernel";
static const char fuzz_sql_csv[] =
	"SELECT 'meta' AS t, capture AS c, key AS a, value AS b FROM meta"
	" UNION ALL SELECT 'probe', capture, kind, spec FROM probes"
	" UNION ALL SELECT 'process', capture, comm, exe FROM processes"
	" UNION ALL SELECT 'object', NULL, build_id, path FROM objects"
	" UNION ALL SELECT 'caller', capture, function, caller FROM callers"
	" UNION ALL SELECT 'loss', capture, kind, count FROM losses"
	" UNION ALL SELECT 'interval', capture, seq, count FROM intervals";
static const char fuzz_sql_json[] =
	"SELECT c.state, c.format, c.duration_ns, s.*, s.count / 3.0 AS third, f.symbol, f.offset,"
	" f.file, f.line, f.reason FROM samples s JOIN captures c ON c.id = s.capture"
	" LEFT JOIN frames f ON f.stack = coalesce(s.kstack, s.ustack) AND f.depth = 0"
	" ORDER BY s.id";

/*
 * The outputs that are no emitter (rep_run()'s other branches), on c and on other (a prefix of
 * the same bytes: a related capture with less in it): --diff both ways with its SVG, --svg alone
 * and merged, --pprof alone and merged, --sql's loader with each printer. Files become sink.
 */
static int fuzz_outputs(struct rep_capture *c, struct rep_capture *other, FILE *sink,
			unsigned int what, struct cap_budget *memory)
{
	static const struct rep_opts sql[] = {
		{ .input = "fuzz", .no_objects = true, .sql = fuzz_sql_table },
		{ .input = "fuzz", .no_objects = true, .sql = fuzz_sql_csv, .csv = true },
		{ .input = "fuzz", .no_objects = true, .sql = fuzz_sql_json, .json = true },
	};
	static const struct rep_opts *const queries[] = { &sql[0], &sql[1], &sql[2] };
	struct rep_capture *pair[2] = { other, c };
	const char *names[2] = { "fuzz-before", "fuzz" };
	struct rep_opts o;
	int err = 0, i;

	/*
	 * --diff: a differential flame graph of c against itself (no change), the lines and shares
	 * of what grew (normalized: scaled by the two durations; -d -a --by pid), a flame graph of
	 * what shrank (-U)
	 */
	for (i = 0; i < 3 && !err && (what & REP_FUZZ_OUTPUTS); i++) {
		struct rep_capture *before_after[3][2] = { { c, c }, { other, c }, { c, other } };
		struct rep_model m = { 0 };

		o = (struct rep_opts){ .input = "fuzz", .no_objects = true, .diff = true,
				       .svg_out = i != 1 ? "-" : NULL, .memory = memory };
		if (i == 1) {
			o.normalize = o.delimited = o.annotations = true;
			o.by = REP_BY_PID;
		} else if (i == 2) {
			o.user_only = true;
		}
		err = rep_diff_write(sink, sink, before_after[i], names, &o, &m);
		rep_model__clear(&m);
	}
	/* --svg: one capture with -U and --max-depth, two merged with --by capture */
	for (i = 0; i < 2 && !err && (what & REP_FUZZ_OUTPUTS); i++) {
		struct rep_model m = { 0 };

		o = (struct rep_opts){ .input = "fuzz", .no_objects = true, .svg_out = "-",
				       .memory = memory };
		if (i == 0) {
			o.user_only = true;
			o.max_depth = 3;
		} else {
			o.by = REP_BY_CAPTURE;
		}
		err = emit_svg(sink, NULL, (const struct rep_capture *const *)(i ? pair : &c), names,
			       i ? 2 : 1, &o, &m);
		rep_model__clear(&m);
	}
	/* --pprof: one capture; two merged, kernel stacks only */
	o = (struct rep_opts){ .input = "fuzz", .no_objects = true, .pprof_out = "-",
			       .memory = memory };
	if (!err && (what & REP_FUZZ_OUTPUTS))
		err = rep_pprof_emit(sink, &c, 1, &o);
	o.kernel_only = true;
	if (!err && (what & REP_FUZZ_OUTPUTS))
		err = rep_pprof_emit(sink, pair, 2, &o);
	/* --sql: both captures loaded, then one query per printer (table, CSV, JSON) */
	if (!err && (what & REP_FUZZ_SQL))
		err = rep_sql_run_many(sink, pair, names, 2, queries, 3);
	return err;
}

/*
 * Where to cut the fuzz input for a second capture to diff and merge with the whole one: after
 * its first interval (or event chunk), so that the two differ in rows and duration; else at
 * half. Never inside the file header, so that the cut capture loads whenever the whole one did.
 */
static size_t fuzz_cut(const void *buf, size_t len)
{
	struct cap_reader *r = cap_reader__open_mem(buf, len);
	struct cap_chunk ch;
	size_t cut = len / 2;
	bool after_interval = false;

	while (r && cap_reader__next(r, &ch) == 1) {
		if (after_interval) {
			cut = ch.offset;
			break;
		}
		after_interval = ch.type == CAP_CHUNK_INTERVAL || ch.type == CAP_CHUNK_EVENTS;
	}
	cap_reader__close(r);
	return cut > 16 ? cut : 16;	/* format.md 2: the 16-byte file header */
}

int rep_fuzz_one(const void *buf, size_t len, FILE *sink, unsigned int what)
{
	/* option sets that together reach every branch of every emitter */
	static const struct rep_opts variants[] = {
		{ .quiet = true },
		{ .perpid = true, .delimited = true, .offset = true, .verbose = true },
		{ .timestamp = true, .annotations = true, .kernel_only = true, .address_stacks = true },
		{ .user_only = true, .delimited = true, .tree_min_pct = 1, .address = true,
		  .old_layout = true },
		{ .by = REP_BY_PROBE, .max_depth = 2, .lines = true, .timestamp = true },
		{ .by = REP_BY_INTERVAL, .grep = "a|k", .time_from = { REP_TIME_REL, 1000000000 } },
	};
	uint32_t pids[] = { 100, 0 };
	/* libFuzzer runs with -malloc_limit_mb=512: the budget must fail first */
	struct cap_budget memory = { .limit = 256u << 20 };
	const struct emitter *const *e;
	struct rep_capture *c, *other = NULL;
	unsigned int i;
	int err = 0;

	c = rep_capture__load_mem(buf, len, &memory);
	if (!c)
		return errno == ENOMEM ? -ENOMEM : 0;
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]) && !err &&
		    (what & REP_FUZZ_EMITTERS); i++) {
		struct rep_opts o = variants[i];

		o.input = "fuzz";
		o.no_objects = true;
		o.memory = &memory;
		if (o.by == REP_BY_INTERVAL) {
			o.pids = pids;
			o.npids = 2;
		}
		for (e = rep_emitters; *e && !err; e++) {
			struct rep_model m = { 0 };

			err = rep_emit(sink, c, &o, *e, &m);
			if (!err && i == 0)
				rep_summary(sink, o.input, c, &m);
			rep_model__clear(&m);
		}
	}
	if (!err && (what & (REP_FUZZ_OUTPUTS | REP_FUZZ_SQL))) {
		other = rep_capture__load_mem(buf, fuzz_cut(buf, len), &memory);
		if (!other)
			err = errno == ENOMEM ? -ENOMEM : 0;
	}
	if (!err && other)
		err = fuzz_outputs(c, other, sink, what, &memory);
	rep_capture__free(other);
	rep_capture__free(c);
	return err;
}
