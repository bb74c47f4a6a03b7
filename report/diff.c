// SPDX-License-Identifier: MIT
/*
 * diff.c: --diff BEFORE AFTER (stkreport(1), "Differences").
 *
 * Both captures become models with the folded layout's keying (symbolized frame names, never
 * addresses: the same function at another address, or in another build, is the same frame), and
 * every distinct folded path gets a line
 *
 *   comm;root;...;leaf COUNT_BEFORE COUNT_AFTER
 *
 * the input of flamegraph.pl's differential mode (difffolded.pl's output), sorted by path. The
 * paths are those -f prints for AFTER's mode (emit_folded.c): for counting captures without
 * -P the comm field is empty (without --by) or absent (with it), as in -f's lines.
 *
 * --normalize scales BEFORE into AFTER's units, so that equal behaviour gives equal counts:
 *
 *   before' = round(before * (w_before / w_after) * (dur_after / dur_before))
 *
 * dur is the capture's duration (end - start, as the summary prints it) and w what one count
 * stands for: 1e9 / freq_hz ns of CPU for frequency sampling, `period` events for sampling every
 * N events, 1 event for counting captures. Without a duration the counts stay as they are (with
 * a warning).
 *
 * Unless -q, stderr gets the functions whose share of samples (stacks with the function on them,
 * over all stacks of the capture) grew or shrank most, ten each:
 *
 *   #   +2.31%  12.00% -> 14.31%  func
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define DIFF_TOP 10

struct diff {
	struct rep_strtab lines;	/* folded paths */
	uint64_t *count[2];		/* per line id: before, after */
	uint32_t cap;
	struct rep_strtab funcs;	/* function names for the shares */
	uint64_t *incl[2];		/* per function: count of the stacks holding it */
	uint32_t *stamp;		/* per function: last stack that counted it */
	uint32_t fcap;
	uint64_t total[2];
	struct rep_charge charge;	/* the arrays above, from the run's budget */
};

static int grow_u64(struct diff *d, uint64_t **v, uint32_t old, uint32_t cap)
{
	uint64_t *n;

	if (rep_charge__take(&d->charge, (uint64_t)(cap - old) * sizeof(*n)))
		return -EFBIG;
	n = realloc(*v, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + old, 0, (cap - old) * sizeof(*n));
	*v = n;
	return 0;
}

static int reserve_lines(struct diff *d, uint32_t id)
{
	uint32_t cap = d->cap ? d->cap : 256;
	int err;

	if (id < d->cap)
		return 0;
	while (cap <= id)
		cap *= 2;
	err = grow_u64(d, &d->count[0], d->cap, cap);
	if (!err)
		err = grow_u64(d, &d->count[1], d->cap, cap);
	if (err)
		return err;
	d->cap = cap;
	return 0;
}

static int reserve_funcs(struct diff *d, uint32_t id)
{
	uint32_t cap = d->fcap ? d->fcap : 256;
	uint32_t *s;
	int err;

	if (id < d->fcap)
		return 0;
	while (cap <= id)
		cap *= 2;
	err = grow_u64(d, &d->incl[0], d->fcap, cap);
	if (!err)
		err = grow_u64(d, &d->incl[1], d->fcap, cap);
	if (err)
		return err;
	if (rep_charge__take(&d->charge, (uint64_t)(cap - d->fcap) * sizeof(*s)))
		return -EFBIG;
	s = realloc(d->stamp, cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s + d->fcap, 0xff, (cap - d->fcap) * sizeof(*s));
	d->stamp = s;
	d->fcap = cap;
	return 0;
}

/* Count each function of the path once for this stack (recursion must not count twice). */
static int add_shares(struct diff *d, int side, const struct emit_path_elem *path, uint32_t n,
		      uint32_t first_frame, uint32_t stack_no, uint64_t count)
{
	uint32_t i;
	int64_t id;
	int err;

	for (i = first_frame; i < n; i++) {
		/* the -d delimiter and profile's lost-stack markers are not functions */
		if (!strcmp(path[i].name, "-") || !strncmp(path[i].name, "[Missed ", 8))
			continue;
		id = rep_strtab__intern(&d->funcs, path[i].name);
		if (id < 0)
			return id;
		err = reserve_funcs(d, id);
		if (err)
			return err;
		if (d->stamp[id] == stack_no)
			continue;
		d->stamp[id] = stack_no;
		d->incl[side][id] = rep_count_add(d->incl[side][id], count, NULL);
	}
	return 0;
}

static int add_model(struct diff *d, int side, const struct rep_model *m, const struct rep_opts *o,
		     uint32_t *stack_no)
{
	struct emit_path_elem *path = NULL;
	char *text = NULL;
	size_t textlen = 0;
	FILE *mem = open_memstream(&text, &textlen);
	uint32_t i, cap = 0, first;
	int64_t id, n;
	int err = 0;

	if (!mem)
		return -ENOMEM;
	for (i = 0; i < m->nstacks && !err; i++) {
		const struct rep_stack *st = &m->stacks[i];

		n = emit_folded_path(m, o, st, &path, &cap);
		if (n < 0) {
			err = n;
			break;
		}
		rewind(mem);
		emit_folded_line(mem, path, n);
		fputc(0, mem);
		if (fflush(mem)) {
			err = -ENOMEM;
			break;
		}
		id = rep_strtab__intern(&d->lines, text);
		err = id < 0 ? (int)id : reserve_lines(d, id);
		if (err)
			break;
		d->count[side][id] = rep_count_add(d->count[side][id], st->count, NULL);
		d->total[side] = rep_count_add(d->total[side], st->count, NULL);
		/* shares are of functions: skip the group and comm elements (or the empty field) */
		first = (o->by != REP_BY_NONE) + (m->cfg.key_comm || emit_folded_blank_comm(m, o));
		err = add_shares(d, side, path, n, first, (*stack_no)++, st->count);
	}
	fclose(mem);
	free(text);
	free(path);
	return err;
}

static bool duration_ns(const struct rep_capture *c, double *ns)
{
	int64_t start;
	uint64_t end;

	if (!rep_capture_start_ns(c, &start) || !rep_capture_end_ns(c, &end) ||
	    (int64_t)end <= start)
		return false;
	*ns = (double)((int64_t)end - start);
	return true;
}

/* What one count stands for (see the top of the file). */
static double count_weight(const struct rep_capture *c)
{
	int64_t v;

	/* counting captures count events, off-CPU captures microseconds: no period to scale */
	if (!rep_capture_is_profile(c) || rep_capture_weight_us(c))
		return 1;
	if (rep_capture_meta_i64(c, "freq_hz", &v) && v > 0)
		return 1e9 / (double)v;
	if (rep_capture_meta_i64(c, "period", &v) && v > 0)
		return (double)v;
	return 1;
}

/* The factor --normalize applies to BEFORE's counts, or 1 (with a warning on msgs) when unknown. */
static double diff_factor(const struct rep_capture *before, const struct rep_capture *after,
			  FILE *msgs)
{
	double d0, d1;

	if (!duration_ns(before, &d0) || !duration_ns(after, &d1)) {
		fprintf(msgs, "stkreport: --normalize: a capture has no duration; counts left "
			      "as they are\n");
		return 1;
	}
	return count_weight(before) / count_weight(after) * (d1 / d0);
}

double rep_diff_factor(const struct rep_capture *before, const struct rep_capture *after)
{
	return diff_factor(before, after, stderr);
}

static int line_cmp(const void *a, const void *b, void *ctx)
{
	const struct rep_strtab *t = ctx;

	return strcmp(rep_strtab__str(t, *(const uint32_t *)a),
		      rep_strtab__str(t, *(const uint32_t *)b));
}

static int print_lines(FILE *out, const struct diff *d, double factor)
{
	uint32_t *order = malloc((d->lines.n ? d->lines.n : 1) * sizeof(*order)), i;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < d->lines.n; i++)
		order[i] = i;
	qsort_r(order, d->lines.n, sizeof(*order), line_cmp, (void *)&d->lines);
	for (i = 0; i < d->lines.n; i++) {
		uint32_t id = order[i];
		uint64_t before = d->count[0][id];

		if (factor != 1) {
			/*
			 * Durations and periods come from the captures: the factor may be huge,
			 * and a double past 2^64 has no uint64_t (converting it is undefined, and
			 * printed 0). Held at the top, as counts are.
			 */
			double scaled = (double)before * factor + 0.5;

			before = scaled < 0x1p64 ? (uint64_t)scaled : UINT64_MAX;
		}
		/* the paths are escaped already (emit_folded_line()) */
		fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", rep_strtab__str(&d->lines, id), before,
			d->count[1][id]);
	}
	free(order);
	return 0;
}

struct share {
	uint32_t func;
	double before, after;	/* percent */
};

static int share_cmp(const void *a, const void *b, void *ctx)
{
	const struct share *x = a, *y = b;
	double dx = x->after - x->before, dy = y->after - y->before;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(rep_strtab__str(ctx, x->func), rep_strtab__str(ctx, y->func));
}

static void print_share(FILE *out, const struct diff *d, const struct share *s)
{
	fprintf(out, "#   %+.2f%%  %.2f%% -> %.2f%%  ", s->after - s->before, s->before, s->after);
	rep_fputs_escaped(out, rep_strtab__str(&d->funcs, s->func), 0);
	fputc('\n', out);
}

static int print_shares(FILE *out, const struct diff *d, const char *const *names)
{
	struct share *v = malloc((d->funcs.n ? d->funcs.n : 1) * sizeof(*v));
	uint32_t i, n = d->funcs.n, shown;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		v[i].func = i;
		v[i].before = d->total[0] ? 100.0 * (double)d->incl[0][i] / (double)d->total[0] : 0;
		v[i].after = d->total[1] ? 100.0 * (double)d->incl[1][i] / (double)d->total[1] : 0;
	}
	if (n)
		qsort_r(v, n, sizeof(*v), share_cmp, (void *)&d->funcs);
	fputs("# diff: before ", out);
	rep_fputs_escaped(out, names[0], 0);
	fprintf(out, ": %" PRIu64 " events, after ", d->total[0]);
	rep_fputs_escaped(out, names[1], 0);
	fprintf(out, ": %" PRIu64 " events\n", d->total[1]);
	fputs("# grew most (share of samples with the function on the stack, before -> after):\n",
	      out);
	/* a change under half a hundredth of a point prints as 0.00: leave it out */
	for (i = 0, shown = 0; i < n && shown < DIFF_TOP && v[i].after - v[i].before >= 0.005;
	     i++, shown++)
		print_share(out, d, &v[i]);
	fputs("# shrank most:\n", out);
	for (i = n, shown = 0; i-- > 0 && shown < DIFF_TOP && v[i].after - v[i].before <= -0.005;
	     shown++)
		print_share(out, d, &v[i]);
	free(v);
	return 0;
}

static void diff_clear(struct diff *d)
{
	rep_strtab__clear(&d->lines);
	rep_strtab__clear(&d->funcs);
	free(d->count[0]);
	free(d->count[1]);
	free(d->incl[0]);
	free(d->incl[1]);
	free(d->stamp);
	rep_charge__clear(&d->charge);
}

/*
 * --diff: lines on out, or the differential flame graph: into the file svg_path (created once
 * both models are built), or on out when svg_path is NULL; warnings, the shares and errors on
 * msgs.
 */
static int diff_run(FILE *out, FILE *msgs, const char *svg_path, struct rep_capture **caps,
		    const char **names, const struct rep_opts *o, struct rep_model *m)
{
	struct rep_model before = { 0 };
	struct rep_model_cfg cfg;
	struct diff d = { .charge.budget = o->memory };
	uint32_t stack_no = 0;
	double factor = 1;
	int err;

	rep_strtab__set_budget(&d.lines, o->memory);
	rep_strtab__set_budget(&d.funcs, o->memory);
	rep_model_cfg_for(&emit_folded, o, caps[1], &cfg);
	err = rep_model__build_many(&before, (const struct rep_capture *const *)&caps[0], &names[0],
				    1, o, &cfg);
	if (!err)
		err = rep_model__build_many(m, (const struct rep_capture *const *)&caps[1],
					    &names[1], 1, o, &cfg);
	if (err)
		goto out;
	if (o->normalize)
		factor = diff_factor(caps[0], caps[1], msgs);
	if (o->svg_out) {
		err = emit_svg_diff(svg_path ? NULL : out, svg_path, &before, m, o, factor);
		if (err && err != -EFBIG) {
			fprintf(msgs, "stkreport: %s: %s\n",
				svg_path ? svg_path : "standard output", cap_output_strerror(err));
		}
		if (err)
			goto out;
	}
	err = add_model(&d, 0, &before, o, &stack_no);
	if (!err)
		err = add_model(&d, 1, m, o, &stack_no);
	if (!err && !o->svg_out)
		err = print_lines(out, &d, factor);
	if (!err && (fflush(out) || ferror(out))) {
		fprintf(msgs, "stkreport: standard output: %s\n", strerror(EIO));
		err = -EIO;
		goto out;
	}
	if (!err && !o->quiet)
		err = print_shares(msgs, &d, names);
	/* over the budget: rep_run() says so */
	if (err && err != -EFBIG)
		fprintf(msgs, "stkreport: --diff: %s\n", strerror(-err));
out:
	diff_clear(&d);
	rep_model__clear(&before);
	return err;
}

int rep_diff_run(struct rep_capture **caps, const char **names, const struct rep_opts *o,
		 struct rep_model *m)
{
	return diff_run(stdout, stderr, o->svg_out, caps, names, o, m);
}

int rep_diff_write(FILE *out, FILE *msgs, struct rep_capture **caps, const char **names,
		   const struct rep_opts *o, struct rep_model *m)
{
	return diff_run(out, msgs, NULL, caps, names, o, m);
}
