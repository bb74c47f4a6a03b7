/* SPDX-License-Identifier: MIT */
/*
 * wl_burner SECS: burns one CPU for SECS seconds (fractions allowed) in main -> stk_top ->
 * stk_mid -> stk_leaf, the sampling target of tests/e2e/profile.sh and the demo. The loop in
 * stk_leaf only reads a flag that SIGALRM sets, so nearly every sample lands in stk_leaf with
 * no clock or library call in between.
 * `wl_burner -v SECS` prints `pid PID` first. `-c` burns SECS of its own CPU time instead of
 * SECS of wall time: on a host other work shares, the number of samples a profile takes of it
 * is then known in advance (SECS times the rate), however long the run takes.
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
	int verbose = 0, which = ITIMER_REAL, sig = SIGALRM;
	double secs;
	char *end;

	for (; argc > 1 && argv[1][0] == '-' && argv[1][1] && !argv[1][2]; argc--, argv++)
		if (argv[1][1] == 'v') {
			verbose = 1;
		} else if (argv[1][1] == 'c') {
			which = ITIMER_PROF;	/* user + system time of the process */
			sig = SIGPROF;
		} else {
			break;
		}
	if (argc != 2 || (secs = strtod(argv[1], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: wl_burner [-v] [-c] SECS\n");
		return 2;
	}
	if (verbose) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
	}
	sigaction(sig, &sa, NULL);
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
	setitimer(which, &it, NULL);
	return stk_top() == 42;	/* use the result so the loop stays */
}
