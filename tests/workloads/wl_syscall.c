/* SPDX-License-Identifier: MIT */
/*
 * wl_syscall: enters getppid(2) exactly N times through main -> wl_outer -> wl_middle ->
 * wl_getppid (tests/e2e/tracepoint.sh, t:syscalls:sys_enter_getppid). Options: see wl.h.
 *
 * On x86_64 wl_getppid issues the syscall instruction itself: libc's syscall() and getppid()
 * are leaf functions without a frame, so a frame-pointer walk from inside them skips their
 * caller, and the user chain would depend on the libc build. With the instruction inline the
 * user stack is exactly main;wl_outer;wl_middle;wl_getppid. GCC drops the frame of a leaf that
 * does not touch the stack even with -fno-omit-frame-pointer; the volatile local forces one.
 */
#include <sys/syscall.h>

#include "wl.h"

__attribute__((noinline)) long wl_getppid(void)
{
#if defined(__x86_64__)
	volatile long ret;
	long r;

	__asm__ __volatile__("syscall"
			     : "=a"(r)
			     : "0"((long)SYS_getppid)
			     : "rcx", "r11", "memory");
	ret = r;
	return ret;
#else
	return syscall(SYS_getppid);
#endif
}

__attribute__((noinline)) void wl_middle(void)
{
	wl_getppid();
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
