/* SPDX-License-Identifier: MIT */
/*
 * wl_deep N DEPTH [SPREAD [WIDE [PAUSE_US]]]: enters getppid(2) exactly N times, the i-th time
 * DEPTH + i % SPREAD frames deep in wl_recurse (SPREAD 1 by default: one stack). With DEPTH above
 * kernel.perf_event_max_stack (127 by default) every user stack is cut at the depth limit; with
 * SPREAD > 1 the events fall on SPREAD distinct stacks (tests/e2e/losses.sh). WIDE 1 recurses in
 * wl_recurse_wide instead, whose frames take 144 bytes each: 118 levels run past 16 KiB of
 * stack; WIDE 2 in wl_recurse_huge, 1040 bytes a level: 80 levels run past the 64 KiB a
 * deferred event copies (tests/e2e/nofp.sh, deferred walks). PAUSE_US: sleep that long after
 * each event, for a rate of new stacks that drains can keep up with (tests/e2e/losses.sh,
 * early drains).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long wl_deep_getppid(void)
{
	volatile long ret = syscall(SYS_getppid);

	return ret;
}

__attribute__((noinline)) void wl_recurse(unsigned long depth)
{
	if (depth > 1)
		wl_recurse(depth - 1);
	else
		wl_deep_getppid();
	__asm__ __volatile__("");	/* not a tail call: every level keeps its frame */
}

/* NAME(depth): the recursion, each level's frame holding BYTES of its own */
#define RECURSE_PADDED(name, bytes)						\
	__attribute__((noinline)) void name(unsigned long depth)		\
	{									\
		volatile char pad[bytes];					\
										\
		pad[0] = (char)depth;						\
		if (depth > 1)							\
			name(depth - 1);					\
		else								\
			wl_deep_getppid();					\
		pad[1] = pad[0];	/* not a tail call: every level keeps its frame */ \
	}

RECURSE_PADDED(wl_recurse_wide, 128)
RECURSE_PADDED(wl_recurse_huge, 1024)

int main(int argc, char **argv)
{
	unsigned long n, depth, spread = 1, pause_us = 0;
	void (*recurse)(unsigned long) = wl_recurse;
	struct timespec pause;

	if (argc < 3 || argc > 6) {
		fprintf(stderr, "usage: %s N DEPTH [SPREAD [WIDE [PAUSE_US]]]\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	depth = strtoul(argv[2], NULL, 0);
	if (argc >= 4)
		spread = strtoul(argv[3], NULL, 0);
	if (argc >= 5 && strtoul(argv[4], NULL, 0))
		recurse = strtoul(argv[4], NULL, 0) == 2 ? wl_recurse_huge : wl_recurse_wide;
	if (argc == 6)
		pause_us = strtoul(argv[5], NULL, 0);
	pause.tv_sec = pause_us / 1000000;
	pause.tv_nsec = (long)(pause_us % 1000000) * 1000;
	for (unsigned long i = 0; i < n; i++) {
		recurse(depth + i % (spread ? spread : 1));
		if (pause_us)
			nanosleep(&pause, NULL);
	}
	return 0;
}
