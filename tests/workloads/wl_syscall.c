/* SPDX-License-Identifier: MIT */
/*
 * wl_syscall: enters getppid(2) exactly N times through main -> wl_outer -> wl_middle ->
 * wl_getppid (tests/e2e/tracepoint.sh, t:syscalls:sys_enter_getppid). Options: see wl.h.
 *
 * wl_getppid issues the syscall instruction itself (wl_syscall() in wl.h says why), so the user
 * stack is exactly main;wl_outer;wl_middle;wl_getppid.
 */
#include "wl.h"

__attribute__((noinline)) long wl_getppid(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void wl_middle(void)
{
	wl_getppid();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		wl_middle();
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, wl_outer);
}
