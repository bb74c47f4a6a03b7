// SPDX-License-Identifier: MIT
/*
 * emit_snoop.c: per-event captures (stkrec --snoop) in bcc stacksnoop's layout, one event at a
 * time in recorded order (EVENTS batches are sorted by time).
 *
 * The format strings are those of bcc's original stacksnoop, tools/stacksnoop.py as Brendan
 * Gregg wrote it in January 2016 (bcc v0.1.x; kept later as tools/old/stacksnoop.py), which
 * printed each trace_printk() line as
 *
 *     header:   "%-18s %s" % ("TIME(s)", "STACK")
 *               "%-18s %-12s %-6s %-3s %s" % ("TIME(s)", "COMM", "PID", "CPU", "STACK")   (-v)
 *     a line:   "%-18.9f %s" % (ts, msg)
 *               "%-18.9f %-12.12s %-6d %-3d %s" % (ts, task, pid, cpu, msg)             (-v)
 *
 * and an event as an empty msg, then msg "ip: %llx SYM" for the probed frame and
 * "r%d: %llx SYM" for each caller (SYM as bcc's ksym(addr, show_offset=-s): "name", or
 * "name+0xOFF", or "[unknown]"). Differences, on purpose: TIME(s) is seconds since the first
 * event printed (bcc showed the trace clock, seconds since boot, meaningless on another
 * machine); every line of an event shows the event's time (bcc's showed each printk's time);
 * the frames are the kernel stack then the user stack (bcc's were kernel only, 10 deep); PID is
 * the thread id, as bcc's trace_fields() gave it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "../report.h"

static void snoop_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	/* the model only feeds the summary here (unnamed frames): the default keying will do */
	(void)o;
	(void)profile;
	(void)cfg;
}

struct snoop_out {
	FILE *out;
	const struct rep_opts *o;
	struct rep_filter *f;
	struct rep_resolver *res;
	bool have_first;
	uint64_t first_ns;
	/* one event's frames, for --grep before printing */
	uint64_t *addrs;
	const char **names;
	uint64_t *offsets;
	uint32_t nframes, cap;
};

/* comm: the event's, escaped and cut to stacksnoop's 12 columns (print_event()) */
static void line_start(struct snoop_out *s, const struct cap_row *row, const char *comm,
		       double t)
{
	if (s->o->verbose)
		fprintf(s->out, "%-18.9f %-12s %-6u %-3u ", t, comm, row->tid, row->cpu);
	else
		fprintf(s->out, "%-18.9f ", t);
}

static int add_frame(struct snoop_out *s, const struct rep_interval *ri, uint32_t row,
		     bool kernel, bool is_return, uint64_t addr)
{
	const struct rep_frame_info *fi;
	int err;

	if (s->nframes == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *a = realloc(s->addrs, cap * sizeof(*a));
		const char **n = a ? realloc(s->names, cap * sizeof(*n)) : NULL;
		uint64_t *off = n ? realloc(s->offsets, cap * sizeof(*off)) : NULL;

		if (a)
			s->addrs = a;
		if (n)
			s->names = n;
		if (!off)
			return -ENOMEM;
		s->offsets = off;
		s->cap = cap;
	}
	err = rep_resolver__frame(s->res, ri, row, kernel, is_return, addr, &fi);
	if (err)
		return err;
	s->addrs[s->nframes] = addr;
	s->names[s->nframes] = fi->name;
	s->offsets[s->nframes] = fi->offset;
	s->nframes++;
	return 0;
}

static int add_stack(struct snoop_out *s, const struct rep_interval *ri, uint32_t row,
		     bool kernel, uint32_t ref)
{
	const struct cap_interval *iv = ri->iv;
	const struct cap_stack *st;
	int err = 0;

	if (ref == CAP_NO_STACK || ref > (kernel ? iv->nkstacks : iv->nustacks))
		return 0;
	st = kernel ? &iv->kstacks[ref - 1] : &iv->ustacks[ref - 1];
	for (uint32_t i = 0; i < st->nips && !err; i++)
		err = add_frame(s, ri, row, kernel, i > 0, st->ips[i]);
	return err;
}

static bool grep_matches(const struct snoop_out *s)
{
	if (!rep_filter__has_grep(s->f))
		return true;
	for (uint32_t i = 0; i < s->nframes; i++)
		if (rep_filter__match(s->f, s->names[i] ? s->names[i] : "[unknown]"))
			return true;
	return false;
}

static int print_event(struct snoop_out *s, const struct rep_interval *ri, uint32_t i)
{
	const struct cap_row *row = &ri->iv->rows[i];
	char comm[13];
	double t;
	int err = 0;

	s->nframes = 0;
	if (!s->o->user_only)
		err = add_stack(s, ri, i, true, row->kstack);
	if (!err && !s->o->kernel_only)
		err = add_stack(s, ri, i, false, row->ustack);
	if (err || !grep_matches(s))
		return err;
	if (!s->have_first) {
		s->have_first = true;
		s->first_ns = row->ts_ns;
	}
	t = row->ts_ns >= s->first_ns ? (row->ts_ns - s->first_ns) / 1e9 :
					-((s->first_ns - row->ts_ns) / 1e9);
	/* bcc's %-12.12s, but an escape is never cut in two */
	rep_escape(comm, sizeof(comm), row->comm, 0);
	line_start(s, row, comm, t);
	fputs("\n", s->out);
	for (uint32_t f = 0; f < s->nframes; f++) {
		line_start(s, row, comm, t);
		if (f == 0)
			fprintf(s->out, "ip: %" PRIx64 " ", s->addrs[f]);
		else
			fprintf(s->out, "r%u: %" PRIx64 " ", f - 1, s->addrs[f]);
		if (!s->names[f]) {
			fputs("[unknown]\n", s->out);
			continue;
		}
		rep_fputs_escaped(s->out, s->names[f], 0);
		if (s->o->offset)
			fprintf(s->out, "+0x%" PRIx64, s->offsets[f]);
		fputc('\n', s->out);
	}
	return 0;
}

static int emit_capture(struct snoop_out *s, const struct rep_capture *c)
{
	int err = rep_filter__capture(s->f, c);

	if (err)
		return err;
	/* stacksnoop prints names and offsets only: no source lines */
	s->res = rep_resolver__new(c, s->o, 0);
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
	return err;
}

static int snoop_emit(FILE *out, const struct rep_model *m, const struct rep_capture *c,
		      const struct rep_opts *o)
{
	struct snoop_out s = { .out = out, .o = o };
	uint32_t n = m->caps ? m->ncaps : 1;
	int err = 0;

	s.f = rep_filter__new(o);
	if (!s.f)
		return -errno;
	if (o->verbose)
		fprintf(out, "%-18s %-12s %-6s %-3s %s\n", "TIME(s)", "COMM", "PID", "CPU", "STACK");
	else
		fprintf(out, "%-18s %s\n", "TIME(s)", "STACK");
	for (uint32_t i = 0; i < n && !err; i++)
		err = emit_capture(&s, m->caps ? rep_model_capture(m, i) : c);
	rep_filter__free(s.f);
	free(s.addrs);
	free(s.names);
	free(s.offsets);
	return err;
}

const struct emitter emit_snoop = {
	.name = "snoop",
	.configure = snoop_configure,
	.emit = snoop_emit,
};
