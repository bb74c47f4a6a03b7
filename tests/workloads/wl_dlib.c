/* SPDX-License-Identifier: MIT */
/* libwl_dlib.so: the library wl_dlopen loads late (tests/e2e/mappings.sh). */
#include <unistd.h>

__attribute__((noinline)) void dlib_work(void)
{
	getppid();
	__asm__ __volatile__("");
}

/* fn n times: a caller in this library of the program's routine without CFI (wl_dlopen nocfi) */
__attribute__((noinline)) void dlib_callback(long (*fn)(void), unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fn();
	__asm__ __volatile__("");
}

__attribute__((noinline)) void dlib_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		dlib_work();
	__asm__ __volatile__("");
}
