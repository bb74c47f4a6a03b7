/* SPDX-License-Identifier: MIT */
/*
 * wl_deep N DEPTH [SPREAD]: enters getppid(2) exactly N times, the i-th time DEPTH + i % SPREAD
 * frames deep in wl_recurse (SPREAD 1 by default: one stack). With DEPTH above
 * kernel.perf_event_max_stack (127 by default) every user stack is cut at the depth limit; with
 * SPREAD > 1 the events fall on SPREAD distinct stacks (tests/e2e/losses.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
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

int main(int argc, char **argv)
{
	unsigned long n, depth, spread = 1;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s N DEPTH [SPREAD]\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	depth = strtoul(argv[2], NULL, 0);
	if (argc == 4)
		spread = strtoul(argv[3], NULL, 0);
	for (unsigned long i = 0; i < n; i++)
		wl_recurse(depth + i % (spread ? spread : 1));
	return 0;
}
