/* SPDX-License-Identifier: MIT */
/*
 * wl_phases: six phases of SECS seconds each (tests/e2e/flight.sh). Phase k enters getppid(2)
 * exactly N times, evenly over its SECS, through main -> phase_K -> wl_middle -> wl_getppid, a
 * chain per phase (phase_a ... phase_f), so a report tells which phases a capture holds and
 * how many of each phase's events:
 *
 *   wl_phases [-v] SECS N
 *
 * Each event fires at its time on CLOCK_MONOTONIC (start + k * SECS + i * SECS / N), so a phase
 * that falls behind catches up within itself and never spills into the next one's time.
 */
#include "wl.h"

static unsigned long long start_ns, phase_ns, n;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void sleep_until(unsigned long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ull, .tv_nsec = t % 1000000000ull };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

__attribute__((noinline)) long wl_getppid(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void wl_middle(unsigned int phase)
{
	unsigned long long from = start_ns + phase * phase_ns;

	for (unsigned long long i = 0; i < n; i++) {
		sleep_until(from + i * phase_ns / n);
		wl_getppid();
	}
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

#define PHASE(name, k)                                         \
	__attribute__((noinline)) void name(void)             \
	{                                                      \
		wl_middle(k);                                  \
		__asm__ __volatile__("");                      \
	}
PHASE(phase_a, 0)
PHASE(phase_b, 1)
PHASE(phase_c, 2)
PHASE(phase_d, 3)
PHASE(phase_e, 4)
PHASE(phase_f, 5)

int main(int argc, char **argv)
{
	int verbose = argc > 1 && !strcmp(argv[1], "-v");

	if (argc != 3 + verbose) {
		fprintf(stderr, "usage: %s [-v] SECS N\n", argv[0]);
		return 2;
	}
	phase_ns = wl_number(argv[0], argv[1 + verbose]) * 1000000000ull;
	n = wl_number(argv[0], argv[2 + verbose]);
	if (verbose) {
		printf("pid %d\n", getpid());
		fflush(stdout);
	}
	start_ns = now_ns();
	phase_a();
	phase_b();
	phase_c();
	phase_d();
	phase_e();
	phase_f();
	return 0;
}
