// SPDX-License-Identifier: MIT
/*
 * rep_analysis.c: issue 3's pieces of the model, one behaviour per check: frame texts (inlined,
 * -l, -s, -v, -a), JSON string escaping, --time bounds on each clock (relative, wall, time of day;
 * intervals by overlap, events by timestamp), --pid/--comm/--probe rows, --grep and --max-depth
 * on a built model, --by groups in display order, and the --normalize factor (held at 2^64-1).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../report/report.h"
#include "../test.h"

/* a pointer, so test.h's NULL checks do not warn about an array */
static void absolute(char path[PATH_MAX])
{
	char real[PATH_MAX];

	if (realpath(path, real))
		strcpy(path, real);
}

static const char *got(const char *s)
{
	return s;
}

/* ---- frame texts --------------------------------------------------------------------------- */

static void render(const struct rep_frame *f, const struct rep_opts *o, bool addr, char *buf)
{
	struct rep_model_cfg cfg = { .addr_column = addr };

	rep_frame_render(f, o, &cfg, buf, 256);
}

/* bcc profile's frames (0.33 on): NAME+0xOFF [MODULE], "0x%016x" addresses with -A */
static void render_bcc(const struct rep_frame *f, const struct rep_opts *o, bool addr, char *buf)
{
	struct rep_model_cfg cfg = { .addr_column = addr, .addr_0x = true, .bcc_frames = true };

	rep_frame_render(f, o, &cfg, buf, 256);
}

static void test_frame_render(void)
{
	struct rep_frame f = { .name = "stk_leaf", .offset = 0x14, .module = "a.out", .addr = 0x401234,
			       .file = "w.c", .line = 12 };
	struct rep_frame in = f, unk = { .module = "libx.so", .module_offset = 0x99,
					 .reason = SYM_R_NOT_FOUND };
	struct rep_opts o = { 0 };
	char buf[256];

	in.name = "helper";
	in.flags = REP_FRAME_F_INLINED;
	render(&f, &o, false, buf);
	T_EQ_STR("test_rep_frame_name", "stk_leaf", got(buf));
	render(&in, &o, false, buf);
	T_EQ_STR("test_rep_frame_inlined", "helper (inlined)", got(buf));
	o.offset = true;
	o.lines = true;
	render(&f, &o, false, buf);
	T_EQ_STR("test_rep_frame_offset_lines", "stk_leaf+0x14 (w.c:12)", got(buf));
	/* an inlined frame has no address of its own: no offset, its own source line */
	render(&in, &o, false, buf);
	T_EQ_STR("test_rep_frame_inlined_lines", "helper (w.c:12) (inlined)", got(buf));
	render(&f, &o, true, buf);
	T_EQ_STR("test_rep_frame_addr_column", "401234           stk_leaf+0x14 (w.c:12)", got(buf));
	render(&unk, &o, false, buf);
	T_EQ_STR("test_rep_frame_unknown", "[unknown]", got(buf));
	o.verbose = true;
	render(&unk, &o, false, buf);
	T_EQ_STR("test_rep_frame_unknown_verbose", "[unknown] (libx.so+0x99)", got(buf));
	o = (struct rep_opts){ .annotations = true };
	f.flags = REP_FRAME_F_KERNEL;
	render(&f, &o, false, buf);
	T_EQ_STR("test_rep_frame_kernel_annotated", "stk_leaf_[k]", got(buf));
}

static void test_frame_render_bcc(void)
{
	struct rep_frame f = { .name = "stk_leaf", .offset = 0x30, .module = "wl_burner",
			       .addr = 0x562c58f111e4 };
	struct rep_frame k = { .name = "do_syscall_64", .offset = 0x5b, .addr = 0xffffffff8100105b,
			       .flags = REP_FRAME_F_KERNEL };
	struct rep_frame km = k, unk = { .module = "libx.so", .reason = SYM_R_NOT_FOUND };
	struct rep_frame nomod = { .reason = SYM_R_OUTSIDE };
	struct rep_opts o = { 0 };
	char buf[256];

	km.module = "ext4";
	render_bcc(&f, &o, false, buf);
	T_EQ_STR("test_rep_frame_bcc", "stk_leaf+0x30 [wl_burner]", got(buf));
	render_bcc(&f, &o, true, buf);
	T_EQ_STR("test_rep_frame_bcc_address", "0x0000562c58f111e4 stk_leaf+0x30 [wl_burner]",
		 got(buf));
	render_bcc(&k, &o, false, buf);
	T_EQ_STR("test_rep_frame_bcc_kernel", "do_syscall_64+0x5b [kernel]", got(buf));
	render_bcc(&km, &o, false, buf);
	T_EQ_STR("test_rep_frame_bcc_module", "do_syscall_64+0x5b [ext4]", got(buf));
	render_bcc(&unk, &o, false, buf);
	T_EQ_STR("test_rep_frame_bcc_unknown", "[unknown] [libx.so]", got(buf));
	render_bcc(&nomod, &o, false, buf);
	T_EQ_STR("test_rep_frame_bcc_unknown_nomodule", "[unknown]", got(buf));
}

/* ---- JSON strings -------------------------------------------------------------------------- */

static void json(const char *in, char *out, size_t len)
{
	FILE *f = fmemopen(out, len, "w");

	emit_json_string(f, in);
	fputc(0, f);
	fclose(f);
}

static void test_json_string(void)
{
	char buf[128];

	json("a\"b\\c\n\t\x01", buf, sizeof(buf));
	T_EQ_STR("test_rep_json_escapes", "\"a\\\"b\\\\c\\n\\t\\u0001\"", got(buf));
	json("caf\xc3\xa9 \xe2\x82\xac", buf, sizeof(buf));
	T_EQ_STR("test_rep_json_utf8_kept", "\"caf\xc3\xa9 \xe2\x82\xac\"", got(buf));
	/* a lone continuation byte, a truncated sequence, an overlong '/' and a surrogate */
	json("x\x80y\xc3" "z\xc0\xaf\xed\xa0\x80", buf, sizeof(buf));
	T_EQ_STR("test_rep_json_bad_utf8",
		 "\"x\\ufffdy\\ufffdz\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"", got(buf));
	json(NULL, buf, sizeof(buf));
	T_EQ_STR("test_rep_json_null", "null", got(buf));
}

/* ---- filters ------------------------------------------------------------------------------- */

#define SEC 1000000000ll
/* CLOCK_MONOTONIC 1000 s is 2026-01-02 03:00:00 UTC */
static struct cap_kv kv[] = {
	{ "start.mono_ns", "1000000000000" },
	{ "clock.mono_ns", "1000000000000" },
	{ "clock.real_ns", "1767322800000000000" },
	{ "mode", "profile" },
	{ "freq_hz", "49" },
};
static struct cap_probe probes[] = {
	{ 0, CAP_PROBE_TRACEPOINT, 1, "t:sched:sched_switch" },
	{ 1, CAP_PROBE_UPROBE, 1, "c:malloc" },
};
static struct cap_meta meta = { 5, kv, 2, probes };

static struct cap_row rows[] = {
	{ .probe = 0, .pid = 10, .comm = "aaa", .count = 1, .ts_ns = 1000 * SEC + SEC / 2 },
	{ .probe = 1, .pid = 20, .comm = "bbb", .count = 2, .ts_ns = 1002 * SEC },
};
static struct cap_interval ivs[] = {
	{ 0, 1000 * SEC, 1001 * SEC, 0, 0, 2, NULL, NULL, rows },
	{ 1, 1001 * SEC, 1002 * SEC, 0, 0, 2, NULL, NULL, rows },
};
static const struct cap_process *procs[2];

static struct rep_capture filter_capture(struct rep_interval *ri)
{
	struct rep_capture c = { .major = 1, .meta = &meta, .intervals = ri, .nintervals = 2 };

	ri[0] = (struct rep_interval){ .iv = &ivs[0], .procs = procs, .ksyms = UINT32_MAX };
	ri[1] = (struct rep_interval){ .iv = &ivs[1], .procs = procs, .ksyms = UINT32_MAX };
	return c;
}

/* Which of the two intervals --time FROM,TO keeps, as a two-bit mask. */
static int kept(struct rep_time_bound from, struct rep_time_bound to)
{
	struct rep_interval ri[2];
	struct rep_capture c = filter_capture(ri);
	struct rep_opts o = { .time_from = from, .time_to = to };
	struct rep_filter *f = rep_filter__new(&o);
	int mask;

	if (!f || rep_filter__capture(f, &c))
		return -1;
	mask = rep_filter__interval(f, &ri[0]) | rep_filter__interval(f, &ri[1]) << 1;
	rep_filter__free(f);
	return mask;
}

static void test_filter_time(void)
{
	struct rep_time_bound none = { REP_TIME_NONE, 0 };

	T_EQ_INT("test_rep_filter_time_rel", 2, kept((struct rep_time_bound){ REP_TIME_REL,
							SEC + SEC / 5 }, none));
	T_EQ_INT("test_rep_filter_time_rel_to", 1,
		 kept(none, (struct rep_time_bound){ REP_TIME_REL, SEC / 2 }));
	/* half-open: an interval ending exactly at FROM is not kept */
	T_EQ_INT("test_rep_filter_time_touching", 2,
		 kept((struct rep_time_bound){ REP_TIME_REL, SEC }, none));
	T_EQ_INT("test_rep_filter_time_wall", 1,
		 kept(none, (struct rep_time_bound){ REP_TIME_WALL, 1767322800500000000ll }));
	/* 03:00:01.5 of the capture's day (TZ=UTC in tests/run? set below) */
	T_EQ_INT("test_rep_filter_time_tod", 2,
		 kept((struct rep_time_bound){ REP_TIME_TOD, (3 * 3600 + 1) * SEC + SEC / 2 },
		      none));
	T_EQ_INT("test_rep_filter_time_tod_outside", 0,
		 kept((struct rep_time_bound){ REP_TIME_TOD, 4 * 3600 * SEC }, none));
}

static void test_filter_rows(void)
{
	struct rep_interval ri[2];
	struct rep_capture c = filter_capture(ri);
	uint32_t pids[] = { 20 };
	struct rep_opts o = { .pids = pids, .npids = 1 };
	struct rep_filter *f;

	f = rep_filter__new(&o);
	rep_filter__capture(f, &c);
	T_CHECK("test_rep_filter_pid", !rep_filter__row(f, &ri[0], &rows[0], "aaa") &&
		rep_filter__row(f, &ri[0], &rows[1], "bbb"), "pid 20 only");
	rep_filter__free(f);
	o = (struct rep_opts){ .comm = "aaa" };
	f = rep_filter__new(&o);
	rep_filter__capture(f, &c);
	T_CHECK("test_rep_filter_comm", rep_filter__row(f, &ri[0], &rows[0], "aaa") &&
		!rep_filter__row(f, &ri[0], &rows[1], "bbb"), "comm aaa only");
	rep_filter__free(f);
	o = (struct rep_opts){ .probe = "c:malloc" };
	f = rep_filter__new(&o);
	rep_filter__capture(f, &c);
	T_CHECK("test_rep_filter_probe_spec", !rep_filter__row(f, &ri[0], &rows[0], "aaa") &&
		rep_filter__row(f, &ri[0], &rows[1], "bbb"), "probe 1 only");
	rep_filter__free(f);
	o = (struct rep_opts){ .probe = "c:free" };
	f = rep_filter__new(&o);
	rep_filter__capture(f, &c);
	T_CHECK("test_rep_filter_probe_unknown", !rep_filter__row(f, &ri[0], &rows[0], "aaa") &&
		!rep_filter__row(f, &ri[0], &rows[1], "bbb"), "a probe not in the capture");
	rep_filter__free(f);
	/* event rows: by timestamp, whatever their chunk's span */
	o = (struct rep_opts){ .time_from = { REP_TIME_REL, SEC } };
	f = rep_filter__new(&o);
	rep_filter__capture(f, &c);
	ri[0].events = true;
	T_CHECK("test_rep_filter_event_ts", rep_filter__interval(f, &ri[0]) &&
		!rep_filter__row(f, &ri[0], &rows[0], "aaa") &&
		rep_filter__row(f, &ri[0], &rows[1], "bbb"), "event at 1.5 s dropped, 2 s kept");
	rep_filter__free(f);
	o = (struct rep_opts){ .grep = "^ma(l|c)" };
	f = rep_filter__new(&o);
	T_CHECK("test_rep_filter_grep", f && rep_filter__match(f, "malloc") &&
		!rep_filter__match(f, "xmalloc"), "extended regex, anchored");
	rep_filter__free(f);
	o = (struct rep_opts){ .grep = "(" };
	{
		FILE *saved = stderr;

		stderr = fopen("/dev/null", "w");
		f = rep_filter__new(&o);
		T_CHECK("test_rep_filter_grep_bad", !f && errno == EINVAL, "bad regex accepted");
		fclose(stderr);
		stderr = saved;
	}
}

/* ---- the model: --grep, --max-depth, --by -------------------------------------------------- */

static struct cap_ksym ksym_arr[] = {
	{ 0xffffffff81001000ull, "k_entry", NULL },
	{ 0xffffffff81002000ull, "k_mid", NULL },
	{ 0xffffffff81003000ull, "k_leaf", NULL },
};
static struct cap_ksyms ksyms = { 0, 3, ksym_arr };
static struct cap_ksyms *ksyms_list[] = { &ksyms };
static uint64_t ips_a[] = { 0xffffffff81003010ull, 0xffffffff81002010ull, 0xffffffff81001010ull };
static uint64_t ips_b[] = { 0xffffffff81002030ull, 0xffffffff81001010ull };
static struct cap_stack kst[] = { { 0, 3, ips_a }, { 0, 2, ips_b } };
static struct cap_row mrows[] = {
	{ .probe = 0, .pid = 30, .comm = "ccc", .kstack = 1, .count = 5 },
	{ .probe = 1, .pid = 7, .comm = "ddd", .kstack = 2, .count = 3 },
	{ .probe = 1, .pid = 300, .comm = "eee", .kstack = 2, .count = 1 },
};
static struct cap_interval miv = { 0, 1000 * SEC, 1001 * SEC, 2, 0, 3, kst, NULL, mrows };
static const struct cap_process *mprocs[3];

static int build(struct rep_model *m, const struct rep_opts *o)
{
	static struct rep_interval ri;
	static struct rep_capture c;
	struct rep_model_cfg cfg = { .kernel = true, .user = true };

	ri = (struct rep_interval){ .iv = &miv, .procs = mprocs, .ksyms = 0 };
	c = (struct rep_capture){ .major = 1, .meta = &meta, .ksyms = ksyms_list, .nksyms = 1,
				  .intervals = &ri, .nintervals = 1 };
	return rep_model__build(m, &c, o, &cfg);
}

static void test_model_grep_depth(void)
{
	struct rep_opts o = { .grep = "leaf" };
	struct rep_model m;

	if (!T_EQ_INT("test_rep_model_grep_build", 0, build(&m, &o)))
		return;
	T_CHECK("test_rep_model_grep", m.nstacks == 1 && m.stacks[0].count == 5 &&
		m.kept_events == 5, "%u stacks", m.nstacks);
	rep_model__clear(&m);
	/* the two innermost frames: stack a becomes k_leaf;k_mid, b stays k_mid;k_entry */
	o = (struct rep_opts){ .max_depth = 2 };
	if (!T_EQ_INT("test_rep_model_depth_build", 0, build(&m, &o)))
		return;
	T_CHECK("test_rep_model_depth", m.nstacks == 2 && m.stacks[1].nk == 2 &&
		!strcmp(rep_strtab__str(&m.strs, m.stacks[1].frames[1]), "k_mid") &&
		m.stacks[0].nk == 2 && m.stacks[0].count == 4, "cut stacks");
	T_CHECK("test_rep_model_frame_record",
		rep_model_frame(&m, m.stacks[1].frames[0])->flags & REP_FRAME_F_KERNEL &&
		!strcmp(rep_model_frame(&m, m.stacks[1].frames[0])->name, "k_leaf") &&
		rep_model_frame(&m, m.stacks[1].frames[0])->offset == 0x10, "structured frame");
	rep_model__clear(&m);
}

static void test_model_by(void)
{
	struct rep_opts o = { .by = REP_BY_PID };
	struct rep_model m;

	if (!T_EQ_INT("test_rep_model_by_build", 0, build(&m, &o)))
		return;
	/* numeric order (7, 30, 300), not text order ("30" < "300" < "7") */
	T_CHECK("test_rep_model_by_pid_order", m.ngroups == 3 &&
		!strcmp(rep_strtab__str(&m.strs, m.groups[0].label), "pid=7") &&
		!strcmp(rep_strtab__str(&m.strs, m.groups[1].value), "30") &&
		!strcmp(rep_strtab__str(&m.strs, m.groups[2].value), "300"), "%u groups",
		m.ngroups);
	T_CHECK("test_rep_model_by_stacks_apart", m.nstacks == 3 && m.stacks[0].group == 0 &&
		m.stacks[0].count == 3 && m.stacks[2].group == 2, "stacks of pids 7 and 300 merged");
	rep_model__clear(&m);
	o = (struct rep_opts){ .by = REP_BY_PROBE };
	if (!T_EQ_INT("test_rep_model_by_probe_build", 0, build(&m, &o)))
		return;
	T_CHECK("test_rep_model_by_probe", m.ngroups == 2 && m.nstacks == 2 &&
		!strcmp(rep_strtab__str(&m.strs, m.groups[1].label), "probe=c:malloc") &&
		m.stacks[1].group == 1 && m.stacks[1].count == 4, "probe groups");
	rep_model__clear(&m);
}

/* ---- inlined functions: one frame each (needs libdw and `make workloads`) ------------------ */

#define INL_BASE 0x555555554000ull

/* First address of inl_work whose innermost inlined function is inl_mix, or 0. */
static uint64_t inline_address(const struct sym_elf *e, struct cap_process *proc)
{
	struct sym_user *u = sym_user__new(&(struct sym_user_opts){ .open_files = true,
								    .inlines = true });
	struct sym_result r;
	uint64_t a, found = 0;
	uint32_t i;

	for (i = 0; u && i < e->nsyms && !found; i++) {
		if (strcmp(e->syms[i].name, "inl_work"))
			continue;
		for (a = e->syms[i].addr; a < e->syms[i].addr + e->syms[i].size; a++) {
			sym_user__lookup(u, proc, INL_BASE + a, false, &r);
			if (r.reason == SYM_OK && r.ninl == 2 && !strcmp(r.inl[0].name, "inl_mix")) {
				found = INL_BASE + a;
				break;
			}
		}
	}
	sym_user__free(u);
	return found;
}

static void test_model_inlines(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : ".output";
	char bin[PATH_MAX], want[PATH_MAX + 64], cwd[PATH_MAX];
	struct cap_mapping map = { .kind = CAP_MAP_FILE, .start = INL_BASE,
				   .end = INL_BASE + 0x100000 };
	struct cap_process proc = { .pid = 1, .nmaps = 1, .maps = &map };
	const struct cap_process *rprocs[1] = { &proc };
	uint64_t ip[1];
	struct cap_stack ust = { 0, 1, ip };
	struct cap_row row = { .pid = 1, .comm = "wl", .ustack = 1, .count = 7 };
	struct cap_interval iv = { 0, 0, 1, 0, 1, 1, NULL, &ust, &row };
	struct rep_interval ri = { .iv = &iv, .procs = rprocs, .ksyms = UINT32_MAX };
	struct rep_capture c = { .major = 1, .intervals = &ri, .nintervals = 1 };
	struct rep_model_cfg cfg = { .kernel = true, .user = true };
	struct rep_opts o = { 0 };
	struct rep_model m;
	struct sym_elf *e;

	snprintf(bin, sizeof(bin), "%s/tests/workloads/wl_inline", out);
	absolute(bin);	/* stkrec records absolute paths; stkreport opens no other */
	e = sym_elf__open(bin);
	if (!e) {
		printf("skip test_rep_model_inlines: %s not built (make workloads)\n", bin);
		return;
	}
	map.path = bin;
	map.build_id_len = e->build_id_len;
	memcpy(map.build_id, e->build_id, e->build_id_len);
	ip[0] = inline_address(e, &proc);
	sym_elf__close(e);
	if (!T_CHECK("test_rep_model_inline_address", ip[0], "no inlined address in %s", bin))
		return;
	if (!T_EQ_INT("test_rep_model_inlines_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	/* innermost first, as perf: inl_mix inlined into inl_outer inlined into inl_work */
	if (T_EQ_INT("test_rep_model_inline_frames", 3, m.nstacks ? m.stacks[0].nu : 0)) {
		T_EQ_STR("test_rep_model_inline_0", "inl_mix (inlined)",
			 rep_strtab__str(&m.strs, m.stacks[0].frames[0]));
		T_EQ_STR("test_rep_model_inline_1", "inl_outer (inlined)",
			 rep_strtab__str(&m.strs, m.stacks[0].frames[1]));
		T_EQ_STR("test_rep_model_inline_2", "inl_work",
			 rep_strtab__str(&m.strs, m.stacks[0].frames[2]));
		T_CHECK("test_rep_model_inline_flags",
			(rep_model_frame(&m, m.stacks[0].frames[0])->flags & REP_FRAME_F_INLINED) &&
			!(rep_model_frame(&m, m.stacks[0].frames[2])->flags & REP_FRAME_F_INLINED),
			"inlined flags");
	}
	rep_model__clear(&m);
	/* -l: each frame with its own line (where the address, or the next call, is) */
	o.lines = true;
	if (!getcwd(cwd, sizeof(cwd)) ||
	    !T_EQ_INT("test_rep_model_inline_lines_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	snprintf(want, sizeof(want), "inl_mix (%s/tests/workloads/wl_inline.c:", cwd);
	T_CHECK("test_rep_model_inline_lines", m.nstacks && m.stacks[0].nu == 3 &&
		!strncmp(rep_strtab__str(&m.strs, m.stacks[0].frames[0]), want, strlen(want)) &&
		strstr(rep_strtab__str(&m.strs, m.stacks[0].frames[0]), ") (inlined)") &&
		!strncmp(rep_strtab__str(&m.strs, m.stacks[0].frames[2]), "inl_work (", 10),
		"got \"%s\"", m.nstacks ? rep_strtab__str(&m.strs, m.stacks[0].frames[0]) : "");
	rep_model__clear(&m);
	o = (struct rep_opts){ .no_inline = true };
	if (!T_EQ_INT("test_rep_model_no_inline_build", 0, rep_model__build(&m, &c, &o, &cfg)))
		return;
	T_CHECK("test_rep_model_no_inline", m.nstacks && m.stacks[0].nu == 1 &&
		!strcmp(rep_strtab__str(&m.strs, m.stacks[0].frames[0]), "inl_work"),
		"one frame per address");
	rep_model__clear(&m);
}

/* ---- --normalize --------------------------------------------------------------------------- */

static void test_diff_factor(void)
{
	static struct cap_kv kv49[] = { { "start.mono_ns", "0" }, { "mode", "profile" },
					{ "freq_hz", "49" } };
	static struct cap_kv kv99[] = { { "start.mono_ns", "0" }, { "mode", "profile" },
					{ "freq_hz", "99" } };
	static struct cap_kv kvc[] = { { "start.mono_ns", "0" }, { "mode", "count" } };
	struct cap_meta m49 = { 3, kv49, 0, NULL }, m99 = { 3, kv99, 0, NULL }, mc = { 2, kvc, 0, NULL };
	struct rep_capture a = { .meta = &m49, .has_end = true, .end = { .end_ns = 2 * SEC } };
	struct rep_capture b = { .meta = &m99, .has_end = true, .end = { .end_ns = 10 * SEC } };
	struct rep_capture c1 = { .meta = &mc, .has_end = true, .end = { .end_ns = 4 * SEC } };
	struct rep_capture c2 = { .meta = &mc, .has_end = true, .end = { .end_ns = 1 * SEC } };
	double f;

	/* before 2 s at 49 Hz, after 10 s at 99 Hz: (1/49)/(1/99) * 10/2 */
	f = rep_diff_factor(&a, &b);
	T_CHECK("test_rep_diff_factor_freq", f > 10.102 && f < 10.103, "got %f", f);
	f = rep_diff_factor(&c1, &c2);
	T_CHECK("test_rep_diff_factor_count", f == 0.25, "got %f", f);
}

/*
 * --diff --normalize where BEFORE lasted 1 ns and AFTER 2^62 ns: the factor (4.6e18) times 40
 * is past 2^64, and the count is held at 2^64-1 (converting the double printed 0). BEFORE is
 * the corpus capture cut after its first interval, before its closing record.
 */
static void test_diff_factor_held(void)
{
	static const char path[] = "tests/fuzz/corpus/diff-normalize-huge-factor.stk";
	struct rep_capture *caps[2] = { NULL, NULL };
	const char *names[2] = { "before", "after" };
	struct rep_opts o = { .diff = true, .normalize = true, .quiet = true, .no_objects = true };
	struct rep_model m = { 0 };
	struct cap_reader *r = NULL;
	struct cap_chunk ch;
	char *text = NULL;
	size_t textlen = 0;
	uint8_t buf[4096];
	size_t len = 0, cut = 0;
	bool after_interval = false;
	FILE *f = fopen(path, "rb"), *out = open_memstream(&text, &textlen);

	if (f) {
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		r = cap_reader__open_mem(buf, len);
	}
	while (r && cap_reader__next(r, &ch) == 1 && !cut) {
		if (after_interval)
			cut = ch.offset;
		after_interval = ch.type == CAP_CHUNK_INTERVAL;
	}
	cap_reader__close(r);
	if (cut) {
		caps[0] = rep_capture__load_mem(buf, cut, NULL);
		caps[1] = rep_capture__load_mem(buf, len, NULL);
	}
	if (T_CHECK("test_rep_diff_factor_held_setup", out && caps[0] && caps[1],
		    "cannot read %s", path))
		T_EQ_INT("test_rep_diff_factor_held_run", 0,
			 rep_diff_write(out, out, caps, names, &o, &m));
	if (out)
		fclose(out);
	/* no object files here: the user frames are [unknown] */
	T_CHECK("test_rep_diff_factor_held",
		text && strstr(text, "burner-pie;[unknown];[unknown];[unknown];[unknown] "
				     "18446744073709551615 40\n"),
		"got:\n%s", text ? text : "");
	rep_model__clear(&m);
	rep_capture__free(caps[0]);
	rep_capture__free(caps[1]);
	free(text);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	test_frame_render();
	test_frame_render_bcc();
	test_json_string();
	test_filter_time();
	test_filter_rows();
	test_model_grep_depth();
	test_model_by();
	test_model_inlines();
	test_diff_factor();
	test_diff_factor_held();
	T_EXIT();
}
