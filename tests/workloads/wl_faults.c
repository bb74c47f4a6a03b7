/* SPDX-License-Identifier: MIT */
/*
 * wl_faults: N page faults from a known chain, main -> wl_outer -> wl_middle -> wl_touch, for
 * tests/e2e/events.sh (-e page-faults). wl_outer maps N fresh anonymous pages (private, not
 * MAP_POPULATE) and wl_touch writes one byte to each: each write faults exactly once. Huge
 * pages are refused with MADV_NOHUGEPAGE, or one fault would fill 512 pages. Options: see wl.h.
 */
#include <sys/mman.h>

#include "wl.h"

/*
 * Write one byte: the store is the faulting instruction. GCC drops the frame of a leaf that does
 * not touch the stack even with -mno-omit-leaf-frame-pointer, and a frame-pointer walk would then
 * skip wl_middle: the volatile local forces the frame.
 */
__attribute__((noinline)) void wl_touch(volatile char *p)
{
	volatile char one = 1;

	*p = one;
}

__attribute__((noinline)) void wl_middle(volatile char *p)
{
	wl_touch(p);
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m;

	if (!n)
		return;
	m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("wl_faults: mmap");
		exit(1);
	}
	madvise(m, n * page, MADV_NOHUGEPAGE);
	for (unsigned long i = 0; i < n; i++)
		wl_middle(m + i * page);
	munmap(m, n * page);
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, wl_outer);
}
