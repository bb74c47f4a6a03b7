/* SPDX-License-Identifier: MIT */
/*
 * wl_burner SECS: burns one CPU for SECS seconds (fractions allowed) in main -> stk_top ->
 * stk_mid -> stk_leaf, the sampling target of tests/e2e/profile.sh and the demo. The loop in
 * stk_leaf only reads a flag that SIGALRM sets, so nearly every sample lands in stk_leaf with
 * no clock or library call in between.
 * `wl_burner -v SECS` prints `pid PID` first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t done;

static void on_alarm(int sig)
{
	(void)sig;
	done = 1;
}

__attribute__((noinline)) unsigned long stk_leaf(void)
{
	volatile unsigned long x = 1;

	while (!done)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

__attribute__((noinline)) unsigned long stk_mid(void)
{
	unsigned long r = stk_leaf();

	__asm__ __volatile__("");	/* the call above is not a tail call */
	return r;
}

__attribute__((noinline)) unsigned long stk_top(void)
{
	unsigned long r = stk_mid();

	__asm__ __volatile__("");
	return r;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { 0 };
	int verbose = 0;
	double secs;
	char *end;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
		argc--, argv++;
	}
	if (argc != 2 || (secs = strtod(argv[1], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: wl_burner [-v] SECS\n");
		return 2;
	}
	if (verbose) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
	}
	sigaction(SIGALRM, &sa, NULL);
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
	setitimer(ITIMER_REAL, &it, NULL);
	return stk_top() == 42;	/* use the result so the loop stays */
}
