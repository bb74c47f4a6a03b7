/* SPDX-License-Identifier: MIT */
/*
 * wl_inline N: built with -O2 -g (Makefile), unlike the other workloads. Calls inl_work() N times;
 * its hot loop is inl_mix(), always inlined into inl_outer(), itself always inlined into
 * inl_work(): a sample in the loop has the chain inl_work <- inl_outer <- inl_mix at one address.
 * tests/unit/rep_sym_lines.c finds the lines marked LINE_* below in the symbolizer's answers.
 */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) unsigned long inl_mix(unsigned long x,
								   unsigned long rounds)
{
	for (unsigned long i = 0; i < rounds; i++)
		x = x * 6364136223846793005ul + (x >> 17) + i;	/* LINE_HOT */
	return x;
}

static inline __attribute__((always_inline)) unsigned long inl_outer(unsigned long x)
{
	return inl_mix(x, 1000) ^ (x >> 3);	/* LINE_CALL_MIX */
}

__attribute__((noinline)) unsigned long inl_work(unsigned long seed)
{
	unsigned long r = inl_outer(seed);	/* LINE_CALL_OUTER */

	__asm__ __volatile__("" : "+r"(r));	/* keep the result and the frame */
	return r;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += inl_work(i);
	printf("%lu\n", acc & 1);
	return 0;
}
