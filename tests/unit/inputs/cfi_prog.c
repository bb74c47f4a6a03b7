// SPDX-License-Identifier: MIT
/*
 * cfi_prog.c: an input of tests/unit/rec_cfi.c, which compares record/unwind/cfi.c's table of it
 * with libdw's reading. The Makefile builds it twice: as usual (.eh_frame), and with
 * -fno-asynchronous-unwind-tables, where its own functions' CFI is only in .debug_frame (crt1.o's
 * _start keeps its .eh_frame). realigned() makes gcc realign the stack through a DRAP register
 * (STK_CFA_RBP_DEREF rows), framed() sets up rbp for its variable-length array (STK_CFA_RBP).
 */
#include <string.h>

__attribute__((noinline)) int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int framed(int n)
{
	char buf[n];

	memset(buf, n, n);
	__asm__ volatile("" : : "r"(buf) : "memory");
	return leaf(buf[n / 2]);
}

__attribute__((noinline)) int realigned(int n)
{
	char buf[n];
	char aligned[64] __attribute__((aligned(64)));

	memset(aligned, n, sizeof(aligned));
	memset(buf, 1, n);
	__asm__ volatile("" : : "r"(aligned), "r"(buf) : "memory");
	return aligned[3] + buf[0] + leaf(n);
}

int main(int argc, char **argv)
{
	(void)argv;
	return (framed(argc + 8) + realigned(argc + 8)) & 1;
}
