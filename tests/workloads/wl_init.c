/* SPDX-License-Identifier: MIT */
/*
 * wl_init: enters getppid(2) from init_getppid(), which the program's _init calls: 500 times as
 * libc runs the program's initializers, before main, then exactly N times more as main calls
 * _init() itself (wl_outer), after -w's wait. _init is glibc's crti.o and crtn.o around the call
 * put in .init here, and has no CFI: sub $8,%rsp first, so its return address is not at rsp
 * (tests/e2e/nofp.sh: record/unwind/cfi.c gives it rules). Options: see wl.h.
 */
#include "wl.h"

static volatile unsigned long init_events = 500;

__attribute__((noinline)) void init_getppid(void)
{
	for (unsigned long i = 0; i < init_events; i++)
		wl_syscall(SYS_getppid, 0, 0);
}

/* A fragment of _init, between crti.o's prologue and crtn.o's epilogue (the linker's order) */
__asm__(".section .init\n"
	"	call init_getppid\n"
	".text\n");

extern void _init(void);

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	init_events = 1;
	for (unsigned long i = 0; i < n; i++)
		_init();
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, wl_outer);
}
