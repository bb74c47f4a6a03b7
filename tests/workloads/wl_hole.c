/* SPDX-License-Identifier: MIT */
/*
 * wl_hole: enters getppid(2) exactly N times through main -> wl_outer -> wl_middle ->
 * wl_getppid, wl_middle with a 24 KiB frame of which it touches only the lowest byte: the pages
 * above stay untouched, not present, inside the stack a walk crosses. A deferred event's
 * copy of the stack has holes there, and the walk reads only around them (tests/e2e/nofp.sh).
 * Options: see wl.h.
 */
#include "wl.h"

__attribute__((noinline)) long wl_getppid(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void wl_middle(void)
{
	volatile char big[24576];

	big[0] = 1;	/* the lowest byte only */
	__asm__ __volatile__("" : : "r"(big) : "memory");	/* kept, as it is */
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
