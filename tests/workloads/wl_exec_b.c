/* SPDX-License-Identifier: MIT */
/*
 * wl_exec_b: the new image of an exec (tests/e2e/exec.sh, started by wl_exec). Enters
 * getppid(2) exactly M times through main -> exec_b_outer -> exec_b_middle -> exec_b_leaf.
 * Another program than wl_exec, so a frame named with the wrong image gets another name or none.
 *
 *   wl_exec_b M
 */
#include "wl.h"

/* Padding: the chain sits at other offsets than wl_exec's functions. */
__attribute__((noinline, used)) void exec_b_pad(void)
{
	__asm__ __volatile__(".fill 4096, 1, 0x90");
}

__attribute__((noinline)) long exec_b_leaf(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void exec_b_middle(void)
{
	exec_b_leaf();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void exec_b_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		exec_b_middle();
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s M\n", argv[0]);
		return 2;
	}
	exec_b_outer(wl_number(argv[0], argv[1]));
	return 0;
}
