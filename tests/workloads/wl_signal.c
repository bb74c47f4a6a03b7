/* SPDX-License-Identifier: MIT */
/*
 * wl_signal: N times, sends itself SIGUSR2 from main -> wl_outer -> wl_middle -> kill(2); the
 * handler enters getppid(2) through wl_handler -> wl_getppid (tests/e2e/nofp.sh, the tracepoint
 * t:syscalls:sys_enter_getppid). The user stack of each getppid runs through the signal frame:
 * wl_getppid, wl_handler, the C library's signal trampoline (__restore_rt), kill, wl_middle,
 * wl_outer, main. Options: see wl.h.
 */
#include "wl.h"

__attribute__((noinline)) long wl_getppid(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void wl_handler(int sig)
{
	(void)sig;
	wl_getppid();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void wl_middle(void)
{
	kill(getpid(), SIGUSR2);	/* delivered on the way out of kill(2): in kill's frame */
	__asm__ __volatile__("");
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		wl_middle();
}

int main(int argc, char **argv)
{
	signal(SIGUSR2, wl_handler);
	return wl_main(argc, argv, wl_outer);
}
