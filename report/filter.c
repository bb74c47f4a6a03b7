// SPDX-License-Identifier: MIT
/*
 * filter.c: the filters every output mode applies before merging (stkreport(1), "Filters"):
 * --pid, --comm, --probe (an id, or the spec as the summary prints it), --time FROM,TO and
 * --grep REGEX (POSIX extended, matched against frame names; agg.c asks per frame text).
 * --max-depth is a cut, not a filter: agg.c applies it while it adds frames.
 *
 * --time bounds are converted once per capture to that capture's CLOCK_MONOTONIC:
 *   REL   start.mono_ns (else the first interval's start) + ns
 *   WALL  ns - (clock.real_ns - clock.mono_ns)
 *   TOD   local midnight of the start's day (wall) + ns, then as WALL
 * Without the clock pair wall time is taken to be monotonic time, as the -T headings do.
 * An interval is kept when (start_ns, end_ns) overlaps (FROM, TO); an event row when its ts_ns is
 * inside [FROM, TO].
 */
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

struct rep_filter {
	const struct rep_opts *o;
	bool has_regex;
	regex_t regex;
	/* per capture */
	bool probe_known;	/* --probe names a probe of this capture */
	uint32_t probe_id;
	bool has_time;
	int64_t from, to;	/* CLOCK_MONOTONIC ns, inclusive */
};

struct rep_filter *rep_filter__new(const struct rep_opts *o)
{
	struct rep_filter *f = calloc(1, sizeof(*f));
	int rc;

	if (!f)
		return NULL;
	f->o = o;
	if (o->grep) {
		rc = regcomp(&f->regex, o->grep, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];

			regerror(rc, &f->regex, msg, sizeof(msg));
			fprintf(stderr, "stkreport: --grep: %s: %s\n", o->grep, msg);
			free(f);
			errno = EINVAL;
			return NULL;
		}
		f->has_regex = true;
	}
	return f;
}

void rep_filter__free(struct rep_filter *f)
{
	if (!f)
		return;
	if (f->has_regex)
		regfree(&f->regex);
	free(f);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void resolve_probe(struct rep_filter *f, const struct rep_capture *c)
{
	const char *want = f->o->probe;
	uint32_t i;

	f->probe_known = false;
	if (all_digits(want)) {
		f->probe_known = true;
		f->probe_id = strtoul(want, NULL, 10);
		return;
	}
	for (i = 0; c->meta && i < c->meta->nprobes; i++) {
		const struct cap_probe *p = &c->meta->probes[i];

		if (p->spec && !strcmp(p->spec, want)) {
			f->probe_known = true;
			f->probe_id = p->id;
			return;
		}
	}
}

/* wall - mono from the capture's clock pair, 0 without it */
static int64_t wall_offset(const struct rep_capture *c)
{
	int64_t mono, real;

	if (rep_capture_meta_i64(c, "clock.mono_ns", &mono) &&
	    rep_capture_meta_i64(c, "clock.real_ns", &real))
		return real - mono;
	return 0;
}

static int64_t bound_to_mono(const struct rep_time_bound *b, const struct rep_capture *c,
			     int64_t open_end)
{
	int64_t start = 0, off = wall_offset(c);
	time_t t;
	struct tm tm;

	rep_capture_start_ns(c, &start);	/* 0 when unknown */

	switch (b->kind) {
	case REP_TIME_REL:
		return start + b->ns;
	case REP_TIME_WALL:
		return b->ns - off;
	case REP_TIME_TOD:
		t = (start + off) / 1000000000;
		if (!localtime_r(&t, &tm))
			return b->ns - off;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		return (int64_t)mktime(&tm) * 1000000000 + b->ns - off;
	default:
		return open_end;
	}
}

int rep_filter__capture(struct rep_filter *f, const struct rep_capture *c)
{
	const struct rep_opts *o = f->o;

	if (o->probe)
		resolve_probe(f, c);
	f->has_time = o->time_from.kind != REP_TIME_NONE || o->time_to.kind != REP_TIME_NONE;
	if (f->has_time) {
		f->from = bound_to_mono(&o->time_from, c, INT64_MIN);
		f->to = bound_to_mono(&o->time_to, c, INT64_MAX);
	}
	return 0;
}

bool rep_filter__interval(const struct rep_filter *f, const struct rep_interval *ri)
{
	if (!f->has_time || ri->events)
		return true;
	/* intervals are half-open in time: one that ends where FROM begins is not kept */
	return (int64_t)ri->iv->start_ns < f->to && (int64_t)ri->iv->end_ns > f->from;
}

bool rep_filter__row(const struct rep_filter *f, const struct rep_interval *ri,
		     const struct cap_row *row, const char *comm)
{
	const struct rep_opts *o = f->o;
	uint32_t i;

	if (o->npids) {
		for (i = 0; i < o->npids && o->pids[i] != row->pid; i++)
			;
		if (i == o->npids)
			return false;
	}
	if (o->comm && strcmp(o->comm, comm))
		return false;
	if (o->probe && (!f->probe_known || row->probe != f->probe_id))
		return false;
	if (f->has_time && ri->events &&
	    ((int64_t)row->ts_ns < f->from || (int64_t)row->ts_ns > f->to))
		return false;
	return true;
}

bool rep_filter__has_grep(const struct rep_filter *f)
{
	return f->has_regex;
}

bool rep_filter__match(const struct rep_filter *f, const char *name)
{
	return !f->has_regex || !regexec(&f->regex, name, 0, NULL, 0);
}
