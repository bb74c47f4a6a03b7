// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/probe/events.c (-e EVENT) and of the off-CPU options as opts.c hands them to
 * the recorder: names to perf_event_attr type/config, the period defaults, usage errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <linux/perf_event.h>

#include "../test.h"
#include "../../record/rec.h"

static int parse(struct rec_opts *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return rec_parse_opts(argc, argv, o);
}

static void test_find(void)
{
	const struct rec_event *e;

	e = rec_event_find(NULL);
	if (T_CHECK("test_rec_event_default", e != NULL, "no default event"))
		(void)T_EQ_STR("test_rec_event_default_name", "cpu-clock", e->name);
	e = rec_event_find("page-faults");
	if (T_CHECK("test_rec_event_page_faults", e != NULL, "page-faults not found")) {
		(void)T_EQ_INT("test_rec_event_page_faults_type", PERF_TYPE_SOFTWARE, e->type);
		(void)T_EQ_U64("test_rec_event_page_faults_config", PERF_COUNT_SW_PAGE_FAULTS,
			       e->config);
	}
	e = rec_event_find("cycles");
	if (T_CHECK("test_rec_event_cycles", e != NULL, "cycles not found")) {
		(void)T_EQ_INT("test_rec_event_cycles_type", PERF_TYPE_HARDWARE, e->type);
		(void)T_EQ_U64("test_rec_event_cycles_config", PERF_COUNT_HW_CPU_CYCLES, e->config);
		(void)T_CHECK("test_rec_event_cycles_hw", rec_event_is_hardware(e), "not hardware");
	}
	e = rec_event_find("task-clock");
	(void)T_EQ_U64("test_rec_event_task_clock", PERF_COUNT_SW_TASK_CLOCK,
		       e ? e->config : ~0ull);
	(void)T_CHECK("test_rec_event_unknown", !rec_event_find("Cycles") && !rec_event_find(""),
		      "names are exact and case-sensitive");
	/* perf's other names: the same events, under our name (meta event) */
	e = rec_event_find("cpu-cycles");
	(void)T_EQ_STR("test_rec_event_alias_cpu_cycles", "cycles", e ? e->name : "(none)");
	e = rec_event_find("faults");
	(void)T_EQ_STR("test_rec_event_alias_faults", "page-faults", e ? e->name : "(none)");
	e = rec_event_find("cs");
	(void)T_EQ_STR("test_rec_event_alias_cs", "context-switches", e ? e->name : "(none)");
}

static void test_names(void)
{
	char buf[256], small[16];
	const char *got = buf;

	(void)T_EQ_INT("test_rec_event_names_rc", 0, rec_event_names(buf, sizeof(buf)));
	(void)T_EQ_STR("test_rec_event_names",
		       "cpu-clock, task-clock, page-faults, context-switches, cpu-migrations, "
		       "cycles, instructions, cache-misses, branch-misses", got);
	(void)T_EQ_INT("test_rec_event_names_small", -ENOSPC,
		       rec_event_names(small, sizeof(small)));
}

/* Rare events take each event unless -F or -c says otherwise; clocks keep 49 Hz. */
static void test_defaults(void)
{
	char *pf[] = { "stkrec", "-e", "page-faults", NULL };
	char *pf_f[] = { "stkrec", "-e", "page-faults", "-F", "49", NULL };
	char *pf_c[] = { "stkrec", "-c", "7", "-e", "page-faults", NULL };
	char *tc[] = { "stkrec", "-e", "task-clock", NULL };
	char *bad[] = { "stkrec", "-e", "no-such", NULL };
	char *spec[] = { "stkrec", "-e", "cycles", "t:a:b", NULL };
	struct rec_opts o;

	if (T_EQ_INT("test_rec_event_pf_rc", 0, parse(&o, pf))) {
		(void)T_EQ_U64("test_rec_event_pf_period", 1, o.period);
		(void)T_EQ_INT("test_rec_event_pf_freq", 0, o.freq_hz);
	}
	rec_opts__free(&o);
	if (T_EQ_INT("test_rec_event_pf_freq_rc", 0, parse(&o, pf_f))) {
		(void)T_EQ_U64("test_rec_event_pf_explicit_freq_period", 0, o.period);
		(void)T_EQ_INT("test_rec_event_pf_explicit_freq", 49, o.freq_hz);
	}
	rec_opts__free(&o);
	if (T_EQ_INT("test_rec_event_pf_count_rc", 0, parse(&o, pf_c)))
		(void)T_EQ_U64("test_rec_event_pf_explicit_count", 7, o.period);
	rec_opts__free(&o);
	if (T_EQ_INT("test_rec_event_tc_rc", 0, parse(&o, tc))) {
		(void)T_EQ_U64("test_rec_event_tc_period", 0, o.period);
		(void)T_EQ_INT("test_rec_event_tc_freq", 49, o.freq_hz);
	}
	rec_opts__free(&o);
	(void)T_EQ_INT("test_rec_event_bad_name", -EINVAL, parse(&o, bad));
	rec_opts__free(&o);
	(void)T_EQ_INT("test_rec_event_with_spec", -EINVAL, parse(&o, spec));
	rec_opts__free(&o);
}

static void test_offcpu_opts(void)
{
	char *ok[] = { "stkrec", "--offcpu", "--min-block", "1000", "--max-block", "5000", NULL };
	char *inv[] = { "stkrec", "--offcpu", "--min-block", "5000", "--max-block", "1000", NULL };
	char *ev[] = { "stkrec", "--offcpu", "-e", "cpu-clock", NULL };
	struct rec_opts o;

	if (T_EQ_INT("test_rec_offcpu_rc", 0, parse(&o, ok))) {
		(void)T_CHECK("test_rec_offcpu_flag", o.offcpu, "offcpu not set");
		(void)T_EQ_U64("test_rec_offcpu_min", 1000, o.min_block_us);
		(void)T_EQ_U64("test_rec_offcpu_max", 5000, o.max_block_us);
	}
	rec_opts__free(&o);
	(void)T_EQ_INT("test_rec_offcpu_min_above_max", -EINVAL, parse(&o, inv));
	rec_opts__free(&o);
	(void)T_EQ_INT("test_rec_offcpu_with_event", -EINVAL, parse(&o, ev));
	rec_opts__free(&o);
}

int main(void)
{
	test_find();
	test_names();
	test_defaults();
	test_offcpu_opts();
	T_EXIT();
}
