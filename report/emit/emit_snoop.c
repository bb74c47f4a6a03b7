// SPDX-License-Identifier: MIT
/*
 * emit_snoop.c: per-event captures (stkrec --snoop) in bcc stacksnoop's layout, one event at a
 * time in recorded order (EVENTS batches are sorted by time).
 *
 * The format strings are those of bcc's stacksnoop as it stands (examples/tracing/stacksnoop.py
 * since 2016; the first tools/stacksnoop.py printed trace_printk() lines, "ip:" and "rN:"):
 *
 *     header:   "%-18s %s" % ("TIME(s)", "FUNCTION")
 *               "%-18s %-12s %-6s %-3s %s" % ("TIME(s)", "COMM", "PID", "CPU", "FUNCTION")  (-v)
 *     an event: "%-18.9f %s" % (ts, function)
 *               "%-18.9f %-12.12s %-6d %-3d %s" % (ts, comm, pid, cpu, function)            (-v)
 *     a frame:  "\t%s" % b.ksym(addr, show_offset=offset)    ("name", "name+0xOFF", "[unknown]")
 *     then:     print()
 *
 * PID is the process (bcc's data.pid is the tgid). ts is seconds since the tracing started
 * (time.time() - start_ts): here since the capture's start, and function, the probe as given on
 * the command line: here the SPEC as recorded. Ours beyond bcc: the user stack after the kernel
 * stack (bcc prints kernel stacks only), -K/-U, "0x%016x " before each name with -A (as bcc
 * profile -A), " (FILE:LINE)" with -l. An interpreter frame (Python, format.md 4.11) reads
 * "NAME (FILE:LINE)" as in the other layouts (-A: its code object's address), and
 * --python-frames picks the frames as for them.
 *
 * Events print as each capture is added (the emitter's stream_* hooks): a capture's events are
 * not kept once it is printed, whatever the number of captures.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../report.h"

static void snoop_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	/* the model only feeds the summary here (unnamed frames): the default keying will do */
	(void)o;
	(void)profile;
	(void)cfg;
}

/* One frame of an event, its strings lent by the resolver until its __free. */
struct snoop_frame {
	uint64_t addr, offset;
	const char *name, *file;	/* NULL when unnamed, unknown */
	uint32_t line;
	bool py;		/* an interpreter frame: addr is its code object's */
};

struct snoop_out {
	FILE *out;
	const struct rep_opts *o;
	const struct rep_capture *c;	/* the capture being printed (snoop_stream_add()) */
	struct rep_filter *f;
	struct rep_resolver *res;
	int64_t start_ns;		/* TIME(s) counts from here */
	bool have_start;
	/* one event's frames, for --grep before printing */
	struct snoop_frame *frames;
	uint32_t nframes, cap;
};

static int add_frame(struct snoop_out *s, const struct rep_interval *ri, uint32_t row,
		     bool kernel, bool is_return, uint64_t addr)
{
	const struct rep_frame_info *fi;
	int err;

	if (s->nframes == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 256;
		struct snoop_frame *v = realloc(s->frames, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->frames = v;
		s->cap = cap;
	}
	err = rep_resolver__frame(s->res, ri, row, kernel, is_return, addr, &fi);
	if (err)
		return err;
	s->frames[s->nframes++] = (struct snoop_frame){ fi->lang ? fi->code_addr : addr,
							  fi->offset, fi->name, fi->file,
							  fi->line, fi->lang };
	return 0;
}

static int add_stack(struct snoop_out *s, const struct rep_interval *ri, uint32_t row,
		     bool kernel)
{
	const struct cap_stack *st = rep_row_stack(ri, row, !kernel);
	int err = 0;

	for (uint32_t i = 0; st && i < st->nips && !err; i++)
		if (kernel || !rep_ip_hidden(s->o, st->ips, st->nips, i))
			err = add_frame(s, ri, row, kernel, i > 0, st->ips[i]);
	return err;
}

static bool grep_matches(const struct snoop_out *s)
{
	if (!rep_filter__has_grep(s->f))
		return true;
	for (uint32_t i = 0; i < s->nframes; i++)
		if (rep_filter__match(s->f, s->frames[i].name ? s->frames[i].name : "[unknown]"))
			return true;
	return false;
}

/* An interpreter frame's file (its base name) and line, as the other layouts show them. */
static void print_code_place(const struct snoop_out *s, const struct snoop_frame *f)
{
	const char *file = f->file ? strrchr(f->file, '/') : NULL;

	if (!f->file)
		return;
	file = file && file[1] ? file + 1 : f->file;
	fputs(" (", s->out);
	rep_fputs_escaped(s->out, file, 0);
	if (!s->o->no_python_lines)
		fprintf(s->out, ":%" PRIu32, f->line);
	fputc(')', s->out);
}

/* "\t%s" % b.ksym(addr, show_offset=offset), with our -A and -l */
static void print_frame(const struct snoop_out *s, const struct snoop_frame *f)
{
	fputc('\t', s->out);
	if (s->o->address)
		fprintf(s->out, "0x%016" PRIx64 " ", f->addr);
	if (!f->name) {
		fputs("[unknown]\n", s->out);
		return;
	}
	rep_fputs_escaped(s->out, f->name, 0);
	if (f->py) {
		print_code_place(s, f);
	} else if (s->o->offset) {
		fprintf(s->out, "+0x%" PRIx64, f->offset);
	}
	if (s->o->lines && f->file && !f->py) {
		fputs(" (", s->out);
		rep_fputs_escaped(s->out, f->file, 0);
		fprintf(s->out, ":%" PRIu32 ")", f->line);
	}
	fputc('\n', s->out);
}

static int print_event(struct snoop_out *s, const struct rep_interval *ri, uint32_t i)
{
	const struct cap_row *row = &ri->iv->rows[i];
	const char *spec = rep_capture_probe_spec(s->c, row->probe);
	char comm[13], probe[16];
	double t;
	int err = 0;

	s->nframes = 0;
	if (!s->o->user_only)
		err = add_stack(s, ri, i, true);
	if (!err && !s->o->kernel_only)
		err = add_stack(s, ri, i, false);
	if (err || !grep_matches(s))
		return err;
	if (!s->have_start) {
		/* a capture without its start: its first event printed */
		s->have_start = true;
		s->start_ns = row->ts_ns;
	}
	/* the difference in unsigned arithmetic: a damaged capture's times may be any two words */
	t = (double)(int64_t)(row->ts_ns - (uint64_t)s->start_ns) / 1e9;
	if (!spec) {
		snprintf(probe, sizeof(probe), "%" PRIu32, row->probe);
		spec = probe;
	}
	if (s->o->verbose) {
		/* bcc's %-12.12s, but an escape is never cut in two */
		rep_escape(comm, sizeof(comm), row->comm, 0);
		fprintf(s->out, "%-18.9f %-12s %-6" PRIu32 " %-3" PRIu32 " ", t, comm, row->pid,
			row->cpu);
	} else {
		fprintf(s->out, "%-18.9f ", t);
	}
	rep_fputs_escaped(s->out, spec, 0);
	fputc('\n', s->out);
	for (uint32_t f = 0; f < s->nframes; f++)
		print_frame(s, &s->frames[f]);
	fputc('\n', s->out);
	return 0;
}

static void *snoop_stream_new(FILE *out, const struct rep_opts *o)
{
	struct snoop_out *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->out = out;
	s->o = o;
	s->f = rep_filter__new(o);
	if (!s->f) {
		free(s);
		return NULL;
	}
	if (o->verbose)
		fprintf(out, "%-18s %-12s %-6s %-3s %s\n", "TIME(s)", "COMM", "PID", "CPU",
			"FUNCTION");
	else
		fprintf(out, "%-18s %s\n", "TIME(s)", "FUNCTION");
	return s;
}

/* The events of one capture, printed as it is added: nothing of it is kept. */
static int snoop_stream_add(void *state, const struct rep_capture *c)
{
	struct snoop_out *s = state;
	int err = rep_filter__capture(s->f, c);

	if (err)
		return err;
	s->c = c;
	s->have_start = rep_capture_start_ns(c, &s->start_ns);
	/* stacksnoop prints names and offsets: source lines only when asked for */
	s->res = rep_resolver__new(c, s->o, s->o->lines ? REP_RESOLVE_LINES : 0);
	if (!s->res)
		return -errno;
	for (uint32_t k = 0; k < c->nintervals && !err; k++) {
		const struct rep_interval *ri = &c->intervals[k];

		if (!ri->events || !rep_filter__interval(s->f, ri))
			continue;
		for (uint32_t i = 0; i < ri->iv->nrows && !err; i++)
			if (rep_filter__row(s->f, ri, &ri->iv->rows[i], ri->iv->rows[i].comm))
				err = print_event(s, ri, i);
	}
	rep_resolver__free(s->res);
	s->res = NULL;
	s->c = NULL;
	return err;
}

static void snoop_stream_free(void *state)
{
	struct snoop_out *s = state;

	if (!s)
		return;
	rep_filter__free(s->f);
	free(s->frames);
	free(s);
}

/* Everything was printed as the captures came: the model only feeds the summary. */
static int snoop_emit(FILE *out, const struct rep_model *m, const struct rep_opts *o)
{
	(void)out;
	(void)m;
	(void)o;
	return 0;
}

const struct emitter emit_snoop = {
	.name = "snoop",
	.configure = snoop_configure,
	.emit = snoop_emit,
	.stream_new = snoop_stream_new,
	.stream_add = snoop_stream_add,
	.stream_free = snoop_stream_free,
};
