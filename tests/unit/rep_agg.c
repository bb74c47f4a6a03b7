// SPDX-License-Identifier: MIT
/*
 * rep_agg.c: the symbolized model: merging by displayed frames (across pids unless keyed),
 * sorting (count ascending, ties by text, never by file order), unnamed-frame accounting, the
 * hash index and the string interner, and option parsing.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../report/report.h"
#include "../test.h"

static struct cap_ksym ksym_arr[] = {
	{ 0xffffffff81001000ull, "k_entry", NULL },
	{ 0xffffffff81002000ull, "k_mid", NULL },
	{ 0xffffffff81003000ull, "k_leaf", NULL },
	{ 0xffffffff81004000ull, "k_other", NULL },
};
static struct cap_ksyms ksyms = { 0, 4, ksym_arr };
static struct cap_ksyms *ksyms_list[] = { &ksyms };

static uint64_t ips_a[] = { 0xffffffff81003010ull, 0xffffffff81002010ull, 0xffffffff81001010ull };
/* same symbols, other offsets: displays the same unless -s or -v */
static uint64_t ips_a2[] = { 0xffffffff81003020ull, 0xffffffff81002020ull, 0xffffffff81001020ull };
static uint64_t ips_b[] = { 0xffffffff81004010ull, 0xffffffff81001010ull };
static uint64_t ips_u[] = { 0x1234, 0x5678 };

static struct cap_stack kst[] = { { 0, 3, ips_a }, { 0, 3, ips_a2 }, { 0, 2, ips_b } };
static struct cap_stack ust[] = { { 0, 2, ips_u } };

static struct cap_row rows[] = {
	{ 0, 10, 10, 0, "aaa", 1, 0, 5 },
	{ 0, 20, 20, 0, "bbb", 2, 0, 4 },	/* same display as the row above */
	{ 0, 30, 30, 0, "ccc", 3, 0, 3 },
	{ 0, 40, 40, 0, "ddd", 0, 1, 3 },	/* user frames of a process without record */
};

static struct cap_interval iv = { 0, 0, 1000, 3, 1, 4, kst, ust, rows };
static const struct cap_process *row_procs[4];
static struct rep_interval ivs[] = { { .iv = &iv, .procs = row_procs, .ksyms = 0 } };

static struct rep_capture capture(void)
{
	struct rep_capture c = { 0 };

	c.major = 1;
	c.ksyms = ksyms_list;
	c.nksyms = 1;
	c.intervals = ivs;
	c.nintervals = 1;
	c.nseqs = 1;
	return c;
}

static const char *frame(const struct rep_model *m, const struct rep_stack *s, uint32_t i)
{
	return rep_strtab__str(&m->strs, s->frames[i]);
}

static void test_merge_and_sort(void)
{
	struct rep_capture c = capture();
	struct rep_opts o = { 0 };
	struct rep_model_cfg cfg = { .kernel = true, .user = true };
	struct rep_model m;

	if (!T_EQ_INT("test_rep_agg_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	/* rows 0 and 1 display the same frames: one stack of 9 */
	T_EQ_INT("test_rep_agg_merge_across_pids", 3, m.nstacks);
	T_EQ_U64("test_rep_agg_merged_count", 9, m.stacks[2].count);
	T_EQ_STR("test_rep_agg_leaf_first", "k_leaf", frame(&m, &m.stacks[2], 0));
	/* two stacks of 3: the one without kernel frames sorts first (empty before text) */
	T_EQ_U64("test_rep_agg_sort_ascending", 3, m.stacks[0].count);
	T_EQ_INT("test_rep_agg_tie_by_text", 0, m.stacks[0].nk);
	T_EQ_STR("test_rep_agg_tie_second", "k_other", frame(&m, &m.stacks[1], 0));
	T_CHECK("test_rep_agg_cmp_consistent",
		rep_stack_cmp(&m, &m.stacks[0], &m.stacks[1]) < 0 &&
			rep_stack_cmp(&m, &m.stacks[1], &m.stacks[0]) > 0 &&
			rep_stack_cmp(&m, &m.stacks[1], &m.stacks[1]) == 0,
		"comparison not antisymmetric");
	/* 2 user frames x 3 events, no process record */
	T_EQ_U64("test_rep_agg_unnamed_weighted", 6, m.unnamed_total);
	T_EQ_U64("test_rep_agg_unnamed_reason", 6, m.unnamed[SYM_R_NO_MAPS]);
	rep_model__clear(&m);
}

static void test_keyed_by_pid(void)
{
	struct rep_capture c = capture();
	struct rep_opts o = { .perpid = true };
	struct rep_model_cfg cfg = { .kernel = true, .user = true, .key_pid = true,
				     .key_comm = true };
	struct rep_model m;

	if (!T_EQ_INT("test_rep_agg_perpid_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	T_EQ_INT("test_rep_agg_perpid_no_merge", 4, m.nstacks);
	T_EQ_STR("test_rep_agg_perpid_comm", "aaa", rep_strtab__str(&m.strs, m.stacks[3].comm));
	T_EQ_U64("test_rep_agg_perpid_pid", 10, m.stacks[3].pid);
	rep_model__clear(&m);
}

static void test_offsets_split(void)
{
	struct rep_capture c = capture();
	struct rep_opts o = { .offset = true };
	struct rep_model_cfg cfg = { .kernel = true, .user = false };
	struct rep_model m;

	if (!T_EQ_INT("test_rep_agg_offset_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	/* with -s the displayed frames differ, so rows 0 and 1 stay apart; -K drops user rows
	 * to an empty stack */
	T_EQ_INT("test_rep_agg_offset_no_merge", 4, m.nstacks);
	T_EQ_STR("test_rep_agg_offset_text", "k_leaf+0x20", frame(&m, &m.stacks[2], 0));
	/* non-leaf kernel frames are looked up at addr - 1, printed at addr */
	T_EQ_STR("test_rep_agg_offset_return", "k_mid+0x20", frame(&m, &m.stacks[2], 1));
	T_EQ_U64("test_rep_agg_kernel_only_no_unnamed", 0, m.unnamed_total);
	rep_model__clear(&m);
}

static void test_timestamp_sections(void)
{
	struct rep_capture c = capture();
	struct rep_opts o = { .timestamp = true };
	struct rep_model_cfg cfg = { .kernel = true, .user = true };
	struct rep_model m;

	if (!T_EQ_INT("test_rep_agg_sections_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	T_EQ_INT("test_rep_agg_sections", 1, m.nsections);
	T_EQ_U64("test_rep_agg_section_end", 1000, m.section_end_ns[0]);
	rep_model__clear(&m);
}

static void test_strtab(void)
{
	struct rep_strtab t = { 0 };
	char buf[32];
	int64_t a, b, id;
	int i, bad = 0;

	a = rep_strtab__intern(&t, "x");
	b = rep_strtab__intern(&t, "y");
	T_CHECK("test_rep_strtab_distinct", a >= 0 && b >= 0 && a != b, "a %lld b %lld",
		(long long)a, (long long)b);
	T_EQ_INT("test_rep_strtab_same", a, rep_strtab__intern(&t, "x"));
	for (i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		id = rep_strtab__intern(&t, buf);
		if (id != i + 2)
			bad++;
	}
	for (i = 0; i < 20000; i += 997) {
		snprintf(buf, sizeof(buf), "s%d", i);
		if (rep_strtab__intern(&t, buf) != i + 2 || strcmp(rep_strtab__str(&t, i + 2), buf))
			bad++;
	}
	T_EQ_INT("test_rep_strtab_many", 0, bad);
	T_EQ_INT("test_rep_strtab_count", 20002, t.n);
	rep_strtab__clear(&t);
}

static int parse(const char *line, struct rep_opts *o)
{
	static char buf[256];	/* the options point into it after we return */
	char *argv[16];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *tok = strtok(buf, " "); tok && argc < 15; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	return rep_parse_opts(argc, argv, o);
}

static void test_opts(void)
{
	struct rep_opts o = { 0 };
	FILE *saved = stderr;

	T_EQ_INT("test_rep_opts_basic", 0, parse("stkreport -P -d -s -v run.stk", &o));
	T_CHECK("test_rep_opts_flags", o.perpid && o.delimited && o.offset && o.verbose &&
		!o.folded && o.input && !strcmp(o.input, "run.stk"), "flags not set");
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_input", 0, parse("stkreport --symfs / -i a.stk --tree", &o));
	T_CHECK("test_rep_opts_input_values", o.tree && o.symfs && !strcmp(o.symfs, "/") &&
		o.input && !strcmp(o.input, "a.stk"), "values not set");
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_tree_min", 0, parse("stkreport --tree --tree-min 2.5 a", &o));
	T_CHECK("test_rep_opts_tree_min_value", o.tree_min_pct == 2.5, "got %g", o.tree_min_pct);
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_many_inputs", 0, parse("stkreport a -i b c", &o));
	T_CHECK("test_rep_opts_many_inputs_order", o.ninputs == 3 && !strcmp(o.inputs[0], "b") &&
		!strcmp(o.inputs[1], "a") && !strcmp(o.inputs[2], "c") && o.input == o.inputs[0],
		"got %d inputs", o.ninputs);
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_filters", 0,
		 parse("stkreport --pid 3,44 --by comm --time 1.5,10:00:02 --max-depth 7 a", &o));
	T_CHECK("test_rep_opts_filter_values", o.npids == 2 && o.pids[1] == 44 &&
		o.by == REP_BY_COMM && o.time_from.kind == REP_TIME_REL &&
		o.time_from.ns == 1500000000 && o.time_to.kind == REP_TIME_TOD &&
		o.time_to.ns == 36002000000000LL && o.max_depth == 7, "values not set");
	rep_opts__free(&o);
	/* usage errors print on stderr: keep the test output clean */
	stderr = fopen("/dev/null", "w");
	T_EQ_INT("test_rep_opts_k_and_u", -EINVAL, parse("stkreport -K -U a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_no_input", -EINVAL, parse("stkreport -P", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_diff_needs_two", -EINVAL, parse("stkreport --diff a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_bad_pct", -EINVAL, parse("stkreport --tree-min 200 a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_bad_by", -EINVAL, parse("stkreport --by cpu a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_bad_time", -EINVAL, parse("stkreport --time 5 a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_bad_pid", -EINVAL, parse("stkreport --pid 3, a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_unknown", -EINVAL, parse("stkreport --bogus a", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_symfs_missing", -EINVAL,
		 parse("stkreport --symfs /nonexistent/dir a.stk", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_grep_bad", -EINVAL, parse("stkreport --grep ( a.stk", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_pprof_svg", -EINVAL,
		 parse("stkreport --pprof a.pb.gz --svg a.svg a.stk", &o));
	rep_opts__free(&o);
	T_EQ_INT("test_rep_opts_svg_folded", -EINVAL, parse("stkreport --svg a.svg -f a.stk", &o));
	rep_opts__free(&o);
	fclose(stderr);
	stderr = saved;
}

int main(void)
{
	test_merge_and_sort();
	test_keyed_by_pid();
	test_offsets_split();
	test_timestamp_sections();
	test_strtab();
	test_opts();
	T_EXIT();
}
