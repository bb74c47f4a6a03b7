/* SPDX-License-Identifier: MIT */
/*
 * wl_nocfi: enters getppid(2) exactly N times through main -> wl_outer -> wl_middle ->
 * nocfi_getppid, an assembly routine without CFI that pushes nothing and holds 3 in rbp, as
 * hand-written assembly may (GMP's). Its frame has neither CFI nor a frame pointer: the walker takes its return address at rsp as a guess that the known mapping it
 * leads to confirms (tests/e2e/nofp.sh, t:syscalls:sys_enter_getppid). Options: see wl.h.
 */
#include "wl.h"

WL_NOCFI_GETPPID(nocfi_getppid);

__attribute__((noinline)) void wl_middle(void)
{
	nocfi_getppid();
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
