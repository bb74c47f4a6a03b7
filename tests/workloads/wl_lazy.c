/* SPDX-License-Identifier: MIT */
/*
 * wl_lazy: the first N (at most 64) functions of libwl_lazy.so, called once each through the PLT
 * with lazy binding (-z lazy, LD_BIND_NOW unset): each call is resolved by ld.so, which calls
 * the library's resolver, which enters getppid(2). So N events with the user stack
 * main;wl_outer;_dl_runtime_resolve_*;_dl_fixup;wl_lazy_resolve;wl_lazy_getppid
 * (tests/e2e/lazy.sh). Options: see wl.h.
 */
#include "wl.h"
#include "wl_lazy.h"

#define X(i) void wl_lazy_f##i(void);
WL_LAZY_FUNCS
#undef X

/* Direct calls: taking a function's address would bind it at load time. */
__attribute__((noinline)) void wl_outer(unsigned long n)
{
	unsigned long called = 0;

#define X(i)                           \
	if (called++ < n)              \
		wl_lazy_f##i();
	WL_LAZY_FUNCS
#undef X
	__asm__ __volatile__("");	/* the last call is not a tail call */
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, wl_outer);
}
