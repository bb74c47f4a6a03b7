/* SPDX-License-Identifier: MIT */
/*
 * libwl_lazy.so, the library of wl_lazy (tests/e2e/lazy.sh): 64 GNU indirect functions with one
 * resolver. Under lazy binding the first call of each goes through ld.so's PLT trampoline,
 * _dl_runtime_resolve_xsavec (or _xsave, _fxsave: by CPU), whose CFA is rbx + 32 (it realigns
 * the stack), and _dl_fixup, which calls the resolver: its getppid is a frame above both.
 */
#include "wl.h"
#include "wl_lazy.h"

static __attribute__((noinline)) void wl_lazy_noop(void)
{
	__asm__ __volatile__("");
}

static __attribute__((noipa)) long wl_lazy_getppid(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

/* Called by _dl_fixup, once per function. */
__attribute__((noinline)) void (*wl_lazy_resolve(void))(void)
{
	wl_lazy_getppid();
	return wl_lazy_noop;
}

#define X(i) __attribute__((ifunc("wl_lazy_resolve"))) void wl_lazy_f##i(void);
WL_LAZY_FUNCS
#undef X
