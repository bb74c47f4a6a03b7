/* SPDX-License-Identifier: MIT */
/*
 * wl_leaf: main -> leaf_a -> leaf_b -> leaf_target, N times. leaf_target is a leaf without a
 * frame (no push %rbp: GCC omits it in leaves, and the attribute makes sure), so a uprobe on its
 * first instruction sees rbp still pointing at leaf_b's frame: a frame-pointer walk goes from
 * leaf_target straight to leaf_a and loses leaf_b unless the return address at the stack pointer
 * is added (tests/e2e/uprobe_leaf.sh). Options: see wl.h.
 */
#include "wl.h"

static volatile unsigned long leaf_hits;

__attribute__((noinline, optimize("omit-frame-pointer"))) void leaf_target(void)
{
	leaf_hits++;
}

__attribute__((noinline)) void leaf_b(void)
{
	leaf_target();
	__asm__ __volatile__("");	/* not a tail call */
}

__attribute__((noinline)) void leaf_a(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		leaf_b();
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, leaf_a);
}
