/* SPDX-License-Identifier: MIT */
/*
 * wl_uprobe: calls wl_target() exactly N times through main -> wl_outer -> wl_middle ->
 * wl_target, the uprobe target of tests/e2e/uprobe.sh. Options: see wl.h.
 */
#include "wl.h"

/* An empty asm keeps the call and the function: the compiler cannot prove it does nothing. */
__attribute__((noinline)) void wl_target(void)
{
	__asm__ __volatile__("");
}

__attribute__((noinline)) void wl_middle(void)
{
	wl_target();
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
