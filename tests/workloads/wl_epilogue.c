/* SPDX-License-Identifier: MIT */
/*
 * wl_epilogue: enters getppid(2) exactly N times through main -> wl_outer -> wl_middle ->
 * epilogue_getppid, an assembly routine that makes the system call in its epilogue, after
 * popping rbp and rbx, as a compiler may place a last call's setup. Its CFI still says where
 * they were saved (gcc writes no .cfi_restore after a pop): in the red zone, below rsp, which the
 * routine overwrites with 3 as a leaf may. The walker must take rbp and rbx from the registers,
 * which hold the caller's values already; wl_middle's frame (frame pointers, CFA from rbp) tells
 * when it did not (tests/e2e/nofp.sh, t:syscalls:sys_enter_getppid). Options: see wl.h.
 */
#include "wl.h"

long epilogue_getppid(void);

__asm__(".text\n"
	".globl epilogue_getppid\n"
	".type epilogue_getppid, @function\n"
	"epilogue_getppid:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 24\n"
	"	.cfi_offset %rbx, -24\n"
	"	mov $5, %ebp\n"
	"	mov $5, %ebx\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	movq $3, -8(%rsp)\n"
	"	movq $3, -16(%rsp)\n"
	"	mov $" WL_STR(SYS_getppid) ", %eax\n"
	"	syscall\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size epilogue_getppid, . - epilogue_getppid\n");

__attribute__((noinline)) void wl_middle(void)
{
	epilogue_getppid();
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
