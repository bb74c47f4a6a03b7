// SPDX-License-Identifier: MIT
/*
 * events.c: the sampling events of -e (perf's names) and their perf_event_attr type/config.
 *
 * Two kinds of defaults: clock and hardware events are sampled by frequency (-F, 49 Hz as bcc
 * profile), since their raw rates (ns of CPU, cycles) are far too high to take every event.
 * Page faults, context switches and migrations are rare enough to take each one: without -F or
 * -c their period is 1, so a report counts events exactly as stackcount counts a tracepoint. In
 * frequency mode the kernel would keep re-tuning the period of such bursty events and the
 * counts would mean neither events nor time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#include "probe.h"

static const struct rec_event events[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, true },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, true },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false },
};

#define NEVENTS (sizeof(events) / sizeof(events[0]))

/* perf's other names of the same events (perf list: "cpu-cycles OR cycles", ...) */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "cpu-cycles", "cycles" },
	{ "faults", "page-faults" },
	{ "cs", "context-switches" },
	{ "migrations", "cpu-migrations" },
};

const struct rec_event *rec_event_find(const char *name)
{
	if (!name)
		return &events[0];	/* no -e: cpu-clock, bcc profile's event */
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].alias, name))
			name = aliases[i].name;
	for (size_t i = 0; i < NEVENTS; i++)
		if (!strcmp(events[i].name, name))
			return &events[i];
	return NULL;
}

int rec_event_names(char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NEVENTS; i++) {
		int n = snprintf(buf + len, sz - len, "%s%s", i ? ", " : "", events[i].name);

		if (n < 0 || (size_t)n >= sz - len)
			return -ENOSPC;
		len += n;
	}
	return 0;
}

bool rec_event_is_hardware(const struct rec_event *e)
{
	return e->type == PERF_TYPE_HARDWARE;
}

void rec_event_defaults(struct rec_opts *o)
{
	const struct rec_event *e = rec_event_find(o->event);

	if (o->freq_hz || o->period)
		return;		/* -F or -c said */
	if (e && e->every_event)
		o->period = 1;
	else
		o->freq_hz = 49;
}
