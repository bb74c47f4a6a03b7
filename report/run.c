// SPDX-License-Identifier: MIT
/*
 * run.c: stkreport after option parsing: every capture given goes, one at a time, into one of:
 * --clickhouse (clickhouse.c), --sql/--sqlite (sql.c), --pprof (emit_pprof.c), --svg
 * (emit_svg.c), or the stack output the options pick over all captures merged (emit_*.c); or
 * --diff (diff.c) compares two. Then summarise each capture, and name any damage once per file,
 * where the file and offset are known.
 *
 * Memory: a capture is loaded, added to the output and freed before the next one is loaded; what
 * stays of it is its summary text. A day of rotated files or a fleet's captures cost what their
 * distinct stacks and names cost in the output, plus one capture at a time.
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
static int report_damage(FILE *f, const char *path, const struct rep_capture *c,
			 const struct rep_opts *o)
{
	switch (c->how) {
	case REP_END_UNCLOSED:
		/* chunks end on a boundary after kill -9: said even with -q, as a truncation is */
		fprintf(f, "stkreport: %s: not closed, ends after interval %u "
			"(the recorder was killed or its disk filled)\n", path, c->nseqs);
		return 0;
	case REP_END_TRUNCATED:
		/* expected after kill -9 or a full disk: what was read is a valid report */
		fprintf(f,
			"stkreport: %s: truncated after interval %u (chunk %u at 0x%llx)\n", path,
			c->nseqs, c->err_chunk, (unsigned long long)c->err_offset);
		return 0;
	case REP_END_ERROR:
		if (c->err == -EFBIG)
			/* what was read before it is reported, as before damage */
			fprintf(f, "stkreport: %s: chunk %u at 0x%llx: decoded data exceed the %u "
				"MiB budget (--max-memory)\n", path, c->err_chunk,
				(unsigned long long)c->err_offset, o->max_memory_mb);
		else
			fprintf(f, "stkreport: %s: chunk %u at 0x%llx: %s\n", path, c->err_chunk,
				(unsigned long long)c->err_offset, strerror(-c->err));
		return c->err;
	default:
		return 0;
	}
}

/*
 * Every capture given must open (its header read, nothing decoded) before the first one is
 * loaded: a misnamed file ends the run before any output is printed, written or sent.
 */
static int check_inputs(const struct rep_opts *o)
{
	for (int i = 0; i < o->ninputs; i++) {
		struct cap_reader *r = cap_reader__open(o->inputs[i]);

		if (!r)
			return open_error(o->inputs[i], errno);
		cap_reader__close(r);
	}
	return 0;
}

/* What stays of a capture once its rows went into the output: what is printed after it. */
struct kept {
	char *summary;		/* its rep_summary() lines (NULL with -q) */
	size_t summary_len;
	char *damage;		/* report_damage()'s line, or empty */
	size_t damage_len;
	int damage_err;		/* report_damage()'s exit error */
	uint64_t events;
};

/* Keep what is printed of capture c after the output, before c is freed. 0 or -ENOMEM. */
static int keep_capture(struct kept *k, const char *name, const struct rep_capture *c,
			const struct rep_opts *o)
{
	FILE *f;

	k->events = c->events;
	if (!o->quiet && !o->diff) {	/* --diff prints its own summary of the two */
		f = open_memstream(&k->summary, &k->summary_len);
		if (!f)
			return -ENOMEM;
		rep_summary(f, name, c, NULL);
		if (fclose(f))
			return -ENOMEM;
	}
	f = open_memstream(&k->damage, &k->damage_len);
	if (!f)
		return -ENOMEM;
	k->damage_err = report_damage(f, name, c, o);
	return fclose(f) ? -ENOMEM : 0;
}

/* The output the captures go to, one at a time. */
enum output_kind { OUT_LAYOUT, OUT_SVG, OUT_PPROF, OUT_SQL, OUT_CLICKHOUSE };

struct output {
	const struct rep_opts *o;
	enum output_kind kind;
	struct rep_model *m;		/* the stack layouts' and --svg's model */
	struct rep_emit_run emit;	/* the stack layouts */
	struct rep_pprof *pprof;
	struct rep_sql *sql;
	struct rep_ch *ch;
	uint64_t refused_loading;	/* the budget's refusals while captures were walked */
};

static enum output_kind output_kind(const struct rep_opts *o)
{
	if (o->clickhouse)
		return OUT_CLICKHOUSE;
	if (o->sql || o->sqlite_out)
		return OUT_SQL;
	if (o->pprof_out)
		return OUT_PPROF;
	return o->svg_out ? OUT_SVG : OUT_LAYOUT;
}

/* Errors the output modules do not print themselves (SQL and ClickHouse print theirs); what:
 * what to name first, or NULL. Over the memory budget, the budget is named. */
static int output_error(const struct output *out, const char *what, int err)
{
	if (err == -EFBIG)
		/* what the output built (the model, the database, the profile) took from the
		 * budget too; it printed nothing, nor did it write a file */
		fprintf(stderr, "stkreport: the report exceeds the %u MiB budget (--max-memory)\n",
			out->o->max_memory_mb);
	else if (err && out->kind != OUT_SQL && out->kind != OUT_CLICKHOUSE)
		fprintf(stderr, "stkreport: %s%s%s\n", what ? what : "", what ? ": " : "",
			strerror(-err));
	return err;
}

/*
 * Set up the output for the first capture (its mode picks the layout and the keying); --pprof's
 * was made by weigh_captures().
 */
static int output_begin(struct output *out, const struct rep_capture *first)
{
	const struct rep_opts *o = out->o;
	struct rep_model_cfg cfg;

	switch (out->kind) {
	case OUT_CLICKHOUSE:
		out->ch = rep_ch__open(o->clickhouse, o);
		return out->ch ? 0 : -errno;
	case OUT_SQL:
		out->sql = rep_sql__open(o);
		return out->sql ? 0 : -errno;
	case OUT_PPROF:
		return 0;
	case OUT_SVG:
		rep_model_cfg_for(&emit_folded, o, first, &cfg);
		return rep_model__begin(out->m, o, &cfg);
	default:
		/* merged captures of mixed modes take the first one's layout */
		return rep_emit__begin(&out->emit, stdout, rep_pick_emitter(o, first), first, o,
				       out->m);
	}
}

static int output_add(struct output *out, const struct rep_capture *c, const char *name)
{
	switch (out->kind) {
	case OUT_CLICKHOUSE:
		return rep_ch__add(out->ch, c, name);
	case OUT_SQL:
		return rep_sql__add(out->sql, c, name);
	case OUT_PPROF:
		return rep_pprof__add(out->pprof, c, name);
	case OUT_SVG:
		return rep_model__add(out->m, c, name);
	default:
		return rep_emit__add(&out->emit, c, name);
	}
}

/*
 * Print, write or send what the captures made (unless err, already printed: then only free it),
 * and return the error. An error of its own is printed here, the budget's in every case.
 */
static int output_finish(struct output *out, int err)
{
	const struct rep_opts *o = out->o;
	int in = err;

	switch (out->kind) {
	case OUT_CLICKHOUSE:
		if (!err)
			err = rep_ch__finish(out->ch);
		rep_ch__close(out->ch);
		break;
	case OUT_SQL:
		if (!err)
			err = rep_sql__finish(out->sql, stdout, &o, 1);
		rep_sql__close(out->sql);
		break;
	case OUT_PPROF:
		/* rep_pprof__write() names the file in its errors */
		if (!err)
			err = rep_pprof__write(out->pprof, o->pprof_out);
		rep_pprof__free(out->pprof);
		break;
	case OUT_SVG:
		if (!err)
			err = rep_model__finish(out->m);
		if (!err)
			err = emit_svg(NULL, o->svg_out, out->m, o);
		if (err && err != -EFBIG && !in)
			fprintf(stderr, "stkreport: %s: %s\n", o->svg_out, cap_output_strerror(err));
		break;
	default:
		err = rep_emit__finish(&out->emit, err);
		if (err && !in && err != -EFBIG)
			output_error(out, err == -EIO ? "standard output" : NULL, err);
	}
	if (err == -EFBIG)
		output_error(out, NULL, err);
	return err;
}

/*
 * The captures, loaded one at a time: each goes into the output, leaves what is printed of it
 * after the output in kept[i], and is freed before the next is loaded, so that the run holds
 * one decoded capture at a time, whatever their number. Errors are printed.
 */
static int stream_captures(const struct rep_opts *o, struct output *out, struct kept *kept)
{
	int err = 0, i;

	for (i = 0; i < o->ninputs && !err; i++) {
		uint64_t refused = o->memory->refused;
		struct rep_capture *c = rep_capture__load(o->inputs[i], o->memory);

		if (!c)
			return open_error(o->inputs[i], errno);
		out->refused_loading += o->memory->refused - refused;
		if (!i) {
			err = output_begin(out, c);
			if (err && err != -EFBIG)
				output_error(out, NULL, err);
		}
		if (!err) {
			err = output_add(out, c, o->inputs[i]);
			if (err && err != -EFBIG)
				output_error(out, o->inputs[i], err);
		}
		if (!err)
			err = keep_capture(&kept[i], o->inputs[i], c, o);
		rep_capture__free(c);
	}
	return err;
}

/*
 * --pprof's first pass: each capture weighed (rep_pprof__weigh()), one at a time, before the
 * rows of any go in. The second loads each capture again: twice the reading, not the memory.
 */
static int weigh_captures(const struct rep_opts *o, struct output *out)
{
	int err = 0;

	out->pprof = rep_pprof__new(o);
	if (!out->pprof)
		return output_error(out, NULL, -errno);
	for (int i = 0; i < o->ninputs && !err && !o->kernel_only; i++) {
		uint64_t refused = o->memory->refused;
		struct rep_capture *c = rep_capture__load(o->inputs[i], o->memory);

		if (!c)
			return open_error(o->inputs[i], errno);
		/* what loading refuses is said as damage, after the second pass */
		out->refused_loading += o->memory->refused - refused;
		err = rep_pprof__weigh(out->pprof, c);
		if (err)
			output_error(out, o->inputs[i], err);
		rep_capture__free(c);
	}
	return err;
}

/* --diff: its two captures at once (diff.c compares their models). */
static int run_diff(const struct rep_opts *o, struct kept *kept, struct rep_model *m,
		    uint64_t *refused_loading)
{
	struct rep_capture *caps[2] = { NULL, NULL };
	int err = 0, i;

	for (i = 0; i < 2 && !err; i++) {
		caps[i] = rep_capture__load(o->inputs[i], o->memory);
		if (!caps[i])
			err = open_error(o->inputs[i], errno);
	}
	*refused_loading = o->memory->refused;
	if (!err)
		err = rep_diff_run(caps, o->inputs, o, m);
	for (i = 0; i < 2 && !err; i++)
		err = keep_capture(&kept[i], o->inputs[i], caps[i], o);
	for (i = 0; i < 2; i++)
		rep_capture__free(caps[i]);
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

enum rep_pyframes rep_pyframes_parse(const char *s)
{
	if (!strcmp(s, "native"))
		return REP_PYFRAMES_NATIVE;
	if (!strcmp(s, "python"))
		return REP_PYFRAMES_PYTHON;
	if (!strcmp(s, "mixed"))
		return REP_PYFRAMES_MIXED;
	return REP_PYFRAMES_DEFAULT;
}

/*
 * --python-frames by default: as the first capture was recorded to be shown (its meta key
 * python_frames, format.md 4.1: its first chunk), else python.
 */
static enum rep_pyframes recorded_python_frames(const char *path)
{
	enum rep_pyframes v = REP_PYFRAMES_DEFAULT;
	struct cap_reader *r = cap_reader__open(path);
	struct cap_record *rec;
	struct cap_chunk ch;
	const char *s;

	if (r && cap_reader__next(r, &ch) == 1 && ch.type == CAP_CHUNK_META &&
	    !cap_record__decode(&ch, &rec)) {
		s = cap_meta_get(&rec->meta, "python_frames");
		v = s ? rep_pyframes_parse(s) : v;
		cap_record__free(rec);
	}
	cap_reader__close(r);
	return v ? v : REP_PYFRAMES_PYTHON;
}

/* After the output: the kept summaries, the merged model's lines, then every damaged capture. */
static int print_kept(const struct rep_opts *o, const struct kept *kept,
		      const struct rep_model *m)
{
	uint64_t total = 0;
	int err = 0, i;

	for (i = 0; i < o->ninputs; i++) {
		if (kept[i].summary_len)
			fwrite(kept[i].summary, 1, kept[i].summary_len, stderr);
		total = rep_count_add(total, kept[i].events, NULL);
	}
	if (!o->quiet && !o->diff) {
		rep_summary_unnamed(stderr, m);
		if (!o->sql && !o->sqlite_out && !o->pprof_out && !o->clickhouse)
			rep_summary_filtered(stderr, o, total, m);
	}
	/* every damaged capture is named; the first error decides the exit status */
	for (i = 0; i < o->ninputs; i++) {
		if (kept[i].damage_len)
			fwrite(kept[i].damage, 1, kept[i].damage_len, stderr);
		if (kept[i].damage_err && !err)
			err = kept[i].damage_err;
	}
	return err;
}

int rep_run(const struct rep_opts *opts)
{
	struct cap_budget memory = { .limit = (uint64_t)opts->max_memory_mb << 20 };
	struct sym_debug_budget debug = { .limit = (uint64_t)opts->max_debug_mb << 20 };
	struct rep_opts run_opts = *opts;
	const struct rep_opts *o = &run_opts;
	struct rep_model m = { 0 };
	struct output out = { .o = o, .m = &m };
	struct kept *kept;
	int err, i;

	run_opts.memory = &memory;
	run_opts.debug = &debug;
	kept = calloc(o->ninputs, sizeof(*kept));
	if (!kept) {
		fprintf(stderr, "stkreport: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	out.kind = output_kind(o);
	err = check_inputs(o);
	if (!err && !run_opts.python_frames)
		run_opts.python_frames = recorded_python_frames(o->inputs[0]);
	if (!err && o->diff) {
		err = run_diff(o, kept, &m, &out.refused_loading);
	} else if (!err) {
		if (out.kind == OUT_PPROF)
			err = weigh_captures(o, &out);
		if (!err)
			err = stream_captures(o, &out, kept);
		/* an error the loop printed ends the run: the output only frees what it made */
		err = output_finish(&out, err);
	}
	if (err)
		goto out;
	err = print_kept(o, kept, &m);
	i = report_budgets(o, out.refused_loading);
	if (i && !err)
		err = i;
out:
	rep_model__clear(&m);
	for (i = 0; i < o->ninputs; i++) {
		free(kept[i].summary);
		free(kept[i].damage);
	}
	free(kept);
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
		struct rep_model_cfg cfg;

		o = (struct rep_opts){ .input = "fuzz", .no_objects = true, .svg_out = "-",
				       .memory = memory };
		if (i == 0) {
			o.user_only = true;
			o.max_depth = 3;
		} else {
			o.by = REP_BY_CAPTURE;
		}
		rep_model_cfg_for(&emit_folded, &o, c, &cfg);
		err = rep_model__build_many(&m, (const struct rep_capture *const *)(i ? pair : &c),
					    names, i ? 2 : 1, &o, &cfg);
		if (!err)
			err = emit_svg(sink, NULL, &m, &o);
		rep_model__clear(&m);
	}
	/* --pprof: one capture; two merged, kernel stacks only, a capture label each */
	o = (struct rep_opts){ .input = "fuzz", .no_objects = true, .pprof_out = "-",
			       .memory = memory };
	if (!err && (what & REP_FUZZ_OUTPUTS))
		err = rep_pprof_emit(sink, &c, &names[1], 1, &o);
	o.kernel_only = true;
	o.by = REP_BY_CAPTURE;
	if (!err && (what & REP_FUZZ_OUTPUTS))
		err = rep_pprof_emit(sink, pair, names, 2, &o);
	/* --sql: both captures loaded, then one query per printer (table, CSV, JSON) */
	if (!err && (what & REP_FUZZ_SQL))
		err = rep_sql_run_many(sink, pair, names, 2, queries, 3);
	return err;
}

size_t rep_fuzz_cut(const void *buf, size_t len)
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
	cut = cut > 16 ? cut : 16;	/* format.md 2: the 16-byte file header */
	return cut < len ? cut : len;
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
		other = rep_capture__load_mem(buf, rep_fuzz_cut(buf, len), &memory);
		if (!other)
			err = errno == ENOMEM ? -ENOMEM : 0;
	}
	if (!err && other)
		err = fuzz_outputs(c, other, sink, what, &memory);
	rep_capture__free(other);
	rep_capture__free(c);
	return err;
}
