/* SPDX-License-Identifier: MIT */
/*
 * wl_pageout: enters pread64(2) exactly N times, each time with the stack page that holds its
 * caller's return address not present, as a sample in a copy-on-write break finds it: through
 * wl_thread -> wl_outer -> wl_pageout, on a thread whose stack is a shared memfd mapping.
 *
 * wl_pageout drops the page (madvise MADV_DONTNEED: for a shared mapping the contents stay in the
 * file) and, without touching the stack in between, reads the page's own bytes from the memfd
 * into it. At the syscall's entry a walk cannot read the return address; the read faults the
 * page back, unchanged, before the thread returns to user space (tests/e2e/retry.sh).
 * Options: see wl.h.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include "wl.h"

#define STACK_BYTES (256 * 1024)

static int stack_fd;
static char *stack_base;

__attribute__((noinline)) void wl_pageout(void)
{
	unsigned long ra = (unsigned long)__builtin_frame_address(0) + 8;	/* the return address */
	unsigned long page = ra & ~4095ul;
	long off = page - (unsigned long)stack_base, r;
	register long r10 __asm__("r10") = off;

	/* madvise(page, 4096, MADV_DONTNEED); pread64(fd, page, 4096, off): no stack access between */
	__asm__ __volatile__("mov $28, %%eax\n\t"
			     "mov %[page], %%rdi\n\t"
			     "mov $4096, %%esi\n\t"
			     "mov $4, %%edx\n\t"
			     "syscall\n\t"
			     "mov $17, %%eax\n\t"
			     "mov %[fd], %%rdi\n\t"
			     "mov %[page], %%rsi\n\t"
			     "mov $4096, %%edx\n\t"
			     "syscall"
			     : "=&a"(r)
			     : [page] "r"(page), [fd] "r"((long)stack_fd), "r"(r10)
			     : "rdi", "rsi", "rdx", "rcx", "r11", "memory");
	if (r != 4096)
		exit(2);
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		wl_pageout();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void *wl_thread(void *n)
{
	wl_outer((unsigned long)n);
	__asm__ __volatile__("");
	return NULL;
}

static void run_batch(unsigned long n)
{
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, stack_base, STACK_BYTES) ||
	    pthread_create(&t, &attr, wl_thread, (void *)n) || pthread_join(t, NULL)) {
		fprintf(stderr, "wl_pageout: cannot run the thread\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	stack_fd = memfd_create("wl_pageout_stack", MFD_CLOEXEC);
	if (stack_fd < 0 || ftruncate(stack_fd, STACK_BYTES)) {
		perror("wl_pageout: memfd");
		return 1;
	}
	stack_base = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, stack_fd, 0);
	if (stack_base == MAP_FAILED) {
		perror("wl_pageout: mmap");
		return 1;
	}
	return wl_main(argc, argv, run_batch);
}
