/* SPDX-License-Identifier: MIT */
/*
 * wl_nocfi: enters getppid(2) exactly N times through main -> wl_outer -> wl_middle -> an
 * assembly routine without CFI that pushes nothing (wl.h), as hand-written assembly may
 * (GMP's), by the event's number modulo 4: nocfi_getppid, holding 3 in rbp (no frame pointer),
 * for 0 and 2; nocfi0_getppid, holding 0 (the ABI's outermost mark, and any register's value in
 * code without frame pointers), for 1; nocfihi_getppid, holding -16 (aligned, above rsp, where
 * nothing can be read: GMP's limbs in rbp), for 3. Their frames have neither CFI nor a frame
 * pointer: the walker takes the return address at rsp as a guess that the known mapping it leads
 * to confirms (tests/e2e/nofp.sh, t:syscalls:sys_enter_getppid). Options: see wl.h.
 */
#include "wl.h"

WL_NOCFI_GETPPID(nocfi_getppid, 3);
WL_NOCFI_GETPPID(nocfi0_getppid, 0);
WL_NOCFI_GETPPID(nocfihi_getppid, -16);

__attribute__((noinline)) void wl_middle(unsigned long i)
{
	if ((i & 3) == 3)
		nocfihi_getppid();
	else if (i & 1)
		nocfi0_getppid();
	else
		nocfi_getppid();
	__asm__ __volatile__("");	/* the calls above are not tail calls */
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
