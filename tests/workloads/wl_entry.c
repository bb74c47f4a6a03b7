/* SPDX-License-Identifier: MIT */
/*
 * wl_entry: 20,000 getppid() calls from the program's entry point, for tests/e2e/nofp.sh.
 *
 * No C library, and _start has no CFI: it is written by hand, as ld.so's is (RTLD_START), whose
 * first instructions a profile of compile loops samples tens of times a minute. The program has
 * CFI elsewhere (wl_entry_status), as ld.so has: its table exists, _start is not in it. At the
 * entry the kernel has cleared rbp and rsp points at argc: a walk that guesses a return address
 * at rsp finds argc, no code. The stack is the entry alone, and it is complete.
 */
#include <sys/syscall.h>

/* wl.h's WL_STR: wl.h needs the C library */
#define STR_(x) #x
#define STR(x) STR_(x)

int wl_entry_status(void);

/* The exit status, from a function the compiler gives CFI. */
__attribute__((noinline)) int wl_entry_status(void)
{
	__asm__ __volatile__("");
	return 0;
}

__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	mov $20000, %ebx\n"
	"1:	mov $" STR(SYS_getppid) ", %eax\n"
	"	syscall\n"
	"	dec %ebx\n"
	"	jnz 1b\n"
	"	call wl_entry_status\n"
	"	mov %eax, %edi\n"
	"	mov $" STR(SYS_exit) ", %eax\n"
	"	syscall\n"
	".size _start, . - _start\n");
