/* SPDX-License-Identifier: MIT */
/*
 * wl_sleep: sleeps N times 50 ms in nanosleep(2) through main -> sleeper_outer -> sleeper_inner,
 * a known total off-CPU time (N * 50000 us) in a known chain, for tests/e2e/offcpu.sh (and N
 * context switches for tests/e2e/events.sh). Options: see wl.h.
 *
 * sleeper_inner issues the syscall instruction itself (wl_syscall() in wl.h says why), so the
 * chain does not depend on the libc build.
 */
#include "wl.h"

#define SLEEP_NS 50000000L	/* 50 ms per call: 20 calls are exactly one second asleep */

__attribute__((noinline)) long sleeper_inner(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = SLEEP_NS };
	volatile long ret;	/* gives the leaf a frame under GCC (wl.h) */
	long r;

	do {
		r = wl_syscall(SYS_nanosleep, (long)&ts, (long)&ts);
	} while (r == -EINTR);	/* the remainder is in ts: sleep the rest, same chain */
	ret = r;
	return ret;
}

__attribute__((noinline)) void sleeper_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sleeper_inner();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, sleeper_outer);
}
