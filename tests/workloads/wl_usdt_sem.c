/* SPDX-License-Identifier: MIT */
/*
 * wl_usdt_sem: the USDT probe stkwl:tick_sem guarded by its semaphore, from main -> wl_outer ->
 * wl_middle -> wl_tick_sem, N times. The probe fires only while a tracer holds the semaphore
 * (the kernel bumps it through the uprobe's ref_ctr_offset), so a tracer that ignores semaphores
 * counts 0 here instead of N. Options: see wl.h.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "wl.h"

/* The semaphore convention of sys/sdt.h: PROVIDER_NAME_semaphore in section .probes. */
__extension__ unsigned short stkwl_tick_sem_semaphore __attribute__((unused))
	__attribute__((section(".probes")));

/* The volatile local forces a frame (see wl_usdt.c). */
__attribute__((noinline)) void wl_tick_sem(unsigned long i)
{
	volatile unsigned long arg = i;

	if (__builtin_expect(stkwl_tick_sem_semaphore, 0))
		DTRACE_PROBE1(stkwl, tick_sem, arg);
}

__attribute__((noinline)) void wl_middle(unsigned long i)
{
	wl_tick_sem(i);
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
