/* SPDX-License-Identifier: MIT */
/*
 * wl_vdso: calls clock_gettime(CLOCK_PROCESS_CPUTIME_ID) exactly N times through main ->
 * wl_outer -> wl_middle -> wl_clock. The vdso serves only the clocks it can read in user space;
 * for this one its clock_gettime falls back to the system call from inside the vdso, so each call
 * fires sys_enter_clock_gettime once with a user stack whose leaf is in [vdso] (tests/e2e/vdso.sh).
 * Options: see wl.h.
 */
#include "wl.h"

__attribute__((noinline)) void wl_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	__asm__ __volatile__("");
}

__attribute__((noinline)) void wl_middle(void)
{
	wl_clock();
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
