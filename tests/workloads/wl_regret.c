/* SPDX-License-Identifier: MIT */
/*
 * wl_regret [-v] SECS: burns one CPU for SECS seconds in code whose return address is in a
 * register, the shape of libgcc's exception return (_Unwind_RaiseException: `mov %rcx,%rsp;
 * pop %rcx; jmp *%rcx`): main -> stk_top -> stk_mid -> wl_cfa_rcx, then wl_ra_rcx, in turn.
 *   wl_cfa_rcx: rcx = rsp, CFA = rcx + 8 (.cfi_def_cfa), a loop, ret;
 *   wl_ra_rcx:  pop %rcx, the return address in rcx (.cfi_register), a loop, jmp *%rcx.
 * Nearly every sample lands in one of the two loops: tests/e2e/regret.sh checks that their
 * stacks are whole. `-v` prints `pid PID` first. x86-64 only.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

/* Spin rdi times with the return address in rcx, or with the CFA from rcx. */
void wl_cfa_rcx(unsigned long n);
void wl_ra_rcx(unsigned long n);

__asm__(".text\n"
	".globl wl_cfa_rcx\n"
	".type wl_cfa_rcx, @function\n"
	"wl_cfa_rcx:\n"
	".cfi_startproc\n"
	"	mov %rsp, %rcx\n"
	".cfi_def_cfa %rcx, 8\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	".cfi_endproc\n"
	".size wl_cfa_rcx, . - wl_cfa_rcx\n"
	".globl wl_ra_rcx\n"
	".type wl_ra_rcx, @function\n"
	"wl_ra_rcx:\n"
	".cfi_startproc\n"
	"	pop %rcx\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_register 16, 2\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	jmp *%rcx\n"
	".cfi_endproc\n"
	".size wl_ra_rcx, . - wl_ra_rcx\n");

static volatile sig_atomic_t done;

static void on_alarm(int sig)
{
	(void)sig;
	done = 1;
}

__attribute__((noinline)) void stk_mid(void)
{
	while (!done) {
		wl_cfa_rcx(1000000);
		wl_ra_rcx(1000000);
	}
	__asm__ __volatile__("");	/* the calls above are not tail calls */
}

__attribute__((noinline)) void stk_top(void)
{
	stk_mid();
	__asm__ __volatile__("");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { 0 };
	double secs;
	char *end;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		argc--, argv++;
	}
	if (argc != 2 || (secs = strtod(argv[1], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: wl_regret [-v] SECS\n");
		return 2;
	}
	sigaction(SIGALRM, &sa, NULL);
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
	setitimer(ITIMER_REAL, &it, NULL);
	stk_top();
	return 0;
}
