// SPDX-License-Identifier: MIT
/*
 * summary.c: the summary stkreport prints on stderr, every line starting with "# ":
 *
 *   # capture: FILE (format 1.0, clean close)
 *   # host: HOST, kernel: RELEASE, arch: ARCH, cpus: N
 *   # recorded: YYYY-MM-DD HH:MM:SS TZ, duration: S.SSS s, intervals: N
 *   # mode: count, probes: N
 *   # probe ID: SPEC (KIND, N attached): N events
 *   # events: N                        (off-CPU captures: `# total off-CPU time: N us`)
 *   # counts saturated: ...            (only when the row counts add past 64 bits)
 *   # lost: N LOSS-NAME                (one line per non-zero loss counter, but for:)
 *   # truncated: N STACKS truncated at the depth limit (counted, innermost frames kept)
 *   # dropped per CPU: cpu N: n, ...   (--snoop captures whose ring buffer overflowed)
 *   # unnamed frames: N (REASON: n, ...)   (only when N > 0, reasons by decreasing n)
 *
 * Several captures: one block per capture (without the unnamed line), then the unnamed line of
 * the merged model. With filters, last: "# filters kept N of M events". What comes from the
 * capture (host, kernel, probe specs...) and the file name print escaped (escape.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

static const char *meta(const struct rep_capture *c, const char *key)
{
	const char *v = c->meta ? cap_meta_get(c->meta, key) : NULL;

	return v && *v ? v : "?";
}

static const char *end_text(const struct rep_capture *c)
{
	switch (c->how) {
	case REP_END_CLEAN:
		return "clean close";
	case REP_END_UNCLOSED:
		return "not closed: the recorder did not exit cleanly";
	case REP_END_TRUNCATED:
		return "truncated";
	default:
		return "damaged";
	}
}

static void print_recorded(FILE *out, const struct rep_capture *c)
{
	int64_t start = 0, wall;
	bool has_start = rep_capture_start_ns(c, &start);
	char when[64] = "?";
	uint64_t end;

	if (has_start && rep_capture_wall_ns(c, start, &wall)) {
		time_t t = wall / 1000000000;
		struct tm tm;

		if (!localtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm))
			snprintf(when, sizeof(when), "?");
	}
	fprintf(out, "# recorded: %s, duration: ", when);
	if (has_start && rep_capture_end_ns(c, &end) && end >= (uint64_t)start)
		fprintf(out, "%.3f s", (double)(end - (uint64_t)start) / 1e9);
	else
		fputs("?", out);
	fprintf(out, ", intervals: %" PRIu32 "\n", c->nseqs);
}

/* Events of the probe with this id, summed over every row read. */
static uint64_t probe_events(const struct rep_capture *c, uint32_t id)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < c->nintervals; i++) {
		const struct cap_interval *iv = c->intervals[i].iv;

		for (uint32_t j = 0; j < iv->nrows; j++)
			if (iv->rows[j].probe == id)
				sum = rep_count_add(sum, iv->rows[j].count, NULL);
	}
	return sum;
}

/* Kernel functions: meta probe.N.mechanism and probe.N.skipped (stkrec's record/write/meta.c). */
static void print_kfunc_mechanism(FILE *out, const struct rep_capture *c, uint32_t id)
{
	char key[64];
	const char *mech, *skipped;

	snprintf(key, sizeof(key), "probe.%" PRIu32 ".mechanism", id);
	mech = c->meta ? cap_meta_get(c->meta, key) : NULL;
	if (!mech)
		return;
	snprintf(key, sizeof(key), "probe.%" PRIu32 ".skipped", id);
	skipped = cap_meta_get(c->meta, key);
	fputs("#   mechanism: ", out);
	rep_fputs_escaped(out, mech, 0);
	fputs(", skipped: ", out);
	rep_fputs_escaped(out, skipped ? skipped : "?", 0);
	fputc('\n', out);
}

static void print_probes(FILE *out, const struct rep_capture *c)
{
	uint32_t n = c->meta ? c->meta->nprobes : 0, i;

	fprintf(out, "# mode: %s, probes: %" PRIu32 "\n",
		rep_capture_weight_us(c) ? "offcpu" : rep_capture_is_profile(c) ? "profile" :
		c->has_events ? "snoop" : "count", n);
	for (i = 0; i < n; i++) {
		const struct cap_probe *p = &c->meta->probes[i];

		fprintf(out, "# probe %" PRIu32 ": ", p->id);
		rep_fputs_escaped(out, p->spec ? p->spec : "?", 0);
		fprintf(out, " (%s, %" PRIu32 " attached): %" PRIu64 " %s\n",
			cap_probe_kind_name(p->kind), p->nattached, probe_events(c, p->id),
			rep_capture_weight_us(c) ? "us" : "events");
		print_kfunc_mechanism(out, c, p->id);
	}
}

/* How user stacks were walked (meta `unwind`, 2.0); older captures do not say: frame pointers. */
static void print_unwind(FILE *out, const struct rep_capture *c)
{
	const char *mode = c->meta ? cap_meta_get(c->meta, "unwind") : NULL;

	if (!mode)
		return;
	fputs("# user stacks: ", out);
	rep_fputs_escaped(out,
			  !strcmp(mode, "fp") ? "fp (frame pointers)" :
			  !strcmp(mode, "cfi") ? "cfi (CFI tables from .eh_frame)" :
			  !strcmp(mode, "auto") ? "auto (CFI tables where an object has them, frame "
						  "pointers elsewhere)" : mode, 0);
	fputc('\n', out);
}

/* --snoop: which CPUs lost events to a full ring buffer */
static void print_cpu_drops(FILE *out, const struct rep_capture *c)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < c->ncpus; i++) {
		if (!c->cpu_dropped[i])
			continue;
		fprintf(out, "%s cpu %" PRIu32 ": %" PRIu64, any ? "," : "# dropped per CPU:", i,
			c->cpu_dropped[i]);
		any = true;
	}
	if (any)
		fputs("\n", out);
}

static void print_unnamed(FILE *out, const struct rep_model *m)
{
	unsigned int order[SYM_R__COUNT], n = 0, i, j;

	if (!m || !m->unnamed_total)
		return;
	for (i = 1; i < SYM_R__COUNT; i++) {
		if (!m->unnamed[i])
			continue;
		/* insertion sort by count descending; ties keep the enum order */
		for (j = n; j > 0 && m->unnamed[order[j - 1]] < m->unnamed[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	fprintf(out, "# unnamed frames: %" PRIu64 " (", m->unnamed_total);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%s: %" PRIu64, i ? ", " : "", sym_reason_name(order[i]),
			m->unnamed[order[i]]);
	fputs(")\n", out);
}

/*
 * A stack cut at the depth limit (kernel.perf_event_max_stack, which the kernel's own walks
 * obey too) is stored and counted with its innermost frames: nothing the limit allows is
 * missing, and perf does not call it lost. The "cut" lines are losses: the walk failed short
 * of the limit, and frames that should be there are not.
 */
static void print_loss(FILE *out, unsigned int kind, uint64_t n)
{
	if (kind == CAP_LOSS_KSTACK_TRUNCATED || kind == CAP_LOSS_USTACK_TRUNCATED)
		fprintf(out, "# truncated: %" PRIu64 " %s (counted, innermost frames kept)\n", n,
			cap_loss_name(kind));
	else
		fprintf(out, "# lost: %" PRIu64 " %s\n", n, cap_loss_name(kind));
}

void rep_summary(FILE *out, const char *name, const struct rep_capture *c,
		 const struct rep_model *m)
{
	unsigned int i;

	fputs("# capture: ", out);
	rep_fputs_escaped(out, name, 0);
	fprintf(out, " (format %u.%u, %s)\n", c->major, c->minor, end_text(c));
	fputs("# host: ", out);
	rep_fputs_escaped(out, meta(c, "host"), 0);
	fputs(", kernel: ", out);
	rep_fputs_escaped(out, meta(c, "kernel"), 0);
	fputs(", arch: ", out);
	rep_fputs_escaped(out, meta(c, "arch"), 0);
	fputs(", cpus: ", out);
	rep_fputs_escaped(out, meta(c, "ncpus"), 0);
	fputc('\n', out);
	print_recorded(out, c);
	print_probes(out, c);
	print_unwind(out, c);
	if (rep_capture_weight_us(c))	/* --offcpu: counts are microseconds blocked */
		fprintf(out, "# total off-CPU time: %" PRIu64 " us\n", c->events);
	else
		fprintf(out, "# events: %" PRIu64 "\n", c->events);
	if (c->saturated)
		fputs("# counts saturated: they add past 64 bits (a damaged or forged capture); every "
		      "total is held at 18446744073709551615\n", out);
	for (i = 0; i < CAP_LOSS__COUNT; i++)
		if (c->losses[i])
			print_loss(out, i, c->losses[i]);
	print_cpu_drops(out, c);
	print_unnamed(out, m);
}

void rep_summary_unnamed(FILE *out, const struct rep_model *m)
{
	print_unnamed(out, m);
}

void rep_summary_filtered(FILE *out, const struct rep_opts *o, uint64_t total,
			  const struct rep_model *m)
{
	if (!o->npids && !o->comm && !o->probe && !o->grep && o->time_from.kind == REP_TIME_NONE &&
	    o->time_to.kind == REP_TIME_NONE)
		return;
	fprintf(out, "# filters kept %" PRIu64 " of %" PRIu64 " events\n", m->kept_events, total);
}
