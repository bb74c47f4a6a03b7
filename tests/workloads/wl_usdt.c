/* SPDX-License-Identifier: MIT */
/*
 * wl_usdt: fires the USDT probe stkwl:tick exactly N times from main -> wl_outer -> wl_middle ->
 * wl_tick (tests/e2e/usdt.sh). The probe has no semaphore (wl_usdt_sem has one). Options: wl.h.
 */
#include <sys/sdt.h>

#include "wl.h"

/*
 * GCC drops the frame of a leaf function that does not touch the stack, even with
 * -fno-omit-frame-pointer; the probe site (a nop) would then sit at the entry, where a
 * frame-pointer walk skips the caller. The volatile local forces a frame, so the site comes after
 * the prologue and the walk reads wl_tick, wl_middle, wl_outer, main.
 */
__attribute__((noinline)) void wl_tick(unsigned long i)
{
	volatile unsigned long arg = i;

	DTRACE_PROBE1(stkwl, tick, arg);
}

__attribute__((noinline)) void wl_middle(unsigned long i)
{
	wl_tick(i);
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		wl_middle(i);
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, wl_outer);
}
