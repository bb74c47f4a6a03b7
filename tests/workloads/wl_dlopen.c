/* SPDX-License-Identifier: MIT */
/*
 * wl_dlopen: a library loaded long after exec, for tests/e2e/mappings.sh.
 *
 *   wl_dlopen LIB N DELAY_MS [nocfi]
 *       N getppid() calls from main, sleep DELAY_MS, dlopen(LIB), then call its dlib_outer(N):
 *       N getppid() calls through main -> call_library -> dlib_outer -> dlib_work -> getppid
 *       (libc). With nocfi, its dlib_callback(nocfi_getppid, N) instead: main -> call_back ->
 *       dlib_callback -> nocfi_getppid, a routine of this program without CFI (wl.h) whose
 *       return address, a guess, is in the library.
 *
 * stkrec reads the process at its exec and its first events, a second before the library exists
 * in it: only the kernel's mmap record of the dlopen() tells it where the library is.
 */
#include <dlfcn.h>
#include <unistd.h>

#include "wl.h"

WL_NOCFI_GETPPID(nocfi_getppid, 3);

__attribute__((noinline)) static int call_library(void (*fn)(unsigned long), unsigned long n)
{
	fn(n);
	__asm__ __volatile__("");
	return 0;
}

__attribute__((noinline)) static int call_back(void (*fn)(long (*)(void), unsigned long),
					       unsigned long n)
{
	fn(nocfi_getppid, n);
	__asm__ __volatile__("");
	return 0;
}

int main(int argc, char **argv)
{
	void (*fn)(unsigned long);
	void (*cb)(long (*)(void), unsigned long);
	void *lib;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "nocfi"))) {
		fprintf(stderr, "usage: %s LIB N DELAY_MS [nocfi]\n", argv[0]);
		return 2;
	}
	for (unsigned long i = 0; i < wl_number(argv[0], argv[2]); i++)
		getppid();	/* the process is seen, and read, before the library exists */
	wl_sleep_ms((long)wl_number(argv[0], argv[3]));
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "%s: %s\n", argv[0], dlerror());
		return 1;
	}
	if (argc == 5) {
		cb = (void (*)(long (*)(void), unsigned long))dlsym(lib, "dlib_callback");
		return cb ? call_back(cb, wl_number(argv[0], argv[2])) : 1;
	}
	fn = (void (*)(unsigned long))dlsym(lib, "dlib_outer");
	if (!fn)
		return 1;
	return call_library(fn, wl_number(argv[0], argv[2]));
}
