/* SPDX-License-Identifier: MIT */
/*
 * wl_rate: enters getppid(2) exactly N times at RATE events per second, through main ->
 * wl_outer -> wl_middle -> wl_getppid (tests/e2e/snoop.sh, t:syscalls:sys_enter_getppid).
 *
 *   wl_rate [-r RATE] [-j THREADS] [-u] [-w] [-v] [-t] N
 *
 * -r RATE: events per second over all threads, 0 (default) as fast as possible. Event i of a
 * thread fires at start + i / (RATE / THREADS): a busy-wait on CLOCK_MONOTONIC, not a sleep,
 * since 200,000 events per second leave 5 us between two events. A thread that falls behind
 * fires at once until it is on schedule again, so the total time is N / RATE when it can.
 * -j THREADS: fire from THREADS threads (N split evenly, the first takes the remainder); thread
 * k > 0 starts at wl_thread instead of main. -u: each of the N also calls wl_target from
 * wl_middle, once, for a uprobe (tests/e2e/boundary.sh). -w, -v, -t: as in wl.h (wait for SIGUSR1, print
 * `pid PID`, print `elapsed_ns NS`).
 *
 * wl_getppid issues the syscall instruction itself, as wl_syscall.c does (wl.h says why).
 */
#include <pthread.h>

#define WL_SYNOPSIS "[-r RATE] [-j THREADS] [-u] [-w] [-v] [-t] N"
#include "wl.h"

#define MAX_THREADS 64

static double period_ns;	/* between two events of one thread; 0: no pacing */
static int with_target;		/* -u */

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) long wl_getppid(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void wl_target(void)
{
	__asm__ __volatile__("");	/* a call the compiler keeps */
}

__attribute__((noinline)) void wl_middle(void)
{
	if (with_target)
		wl_target();
	wl_getppid();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void wl_outer(unsigned long n)
{
	unsigned long long t0 = now_ns();

	for (unsigned long i = 0; i < n; i++) {
		if (period_ns > 0)
			while (now_ns() < t0 + (unsigned long long)(i * period_ns))
				;
		wl_middle();
	}
}

__attribute__((noinline)) void *wl_thread(void *arg)
{
	wl_outer((unsigned long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long rate = 0, threads = 1, share;
	pthread_t tid[MAX_THREADS];
	struct wl_opts o = { 0 };
	int c;

	while ((c = getopt(argc, argv, "r:j:uwvt")) != -1) {
		switch (c) {
		case 'r':
			rate = wl_number(argv[0], optarg);
			break;
		case 'j':
			threads = wl_number(argv[0], optarg);
			break;
		case 'u':
			with_target = 1;
			break;
		case 'w':
			o.wait_signal = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 't':
			o.timed = 1;
			break;
		default:
			wl_usage(argv[0]);
		}
	}
	if (optind != argc - 1 || threads == 0 || threads > MAX_THREADS)
		wl_usage(argv[0]);
	o.n = wl_number(argv[0], argv[optind]);
	if (rate)
		period_ns = 1e9 * threads / rate;

	wl_wait_start(&o);
	share = o.n / threads;
	for (unsigned long k = 1; k < threads; k++)
		if (pthread_create(&tid[k], NULL, wl_thread, (void *)share)) {
			perror("pthread_create");
			return 1;
		}
	wl_outer(o.n - share * (threads - 1));
	for (unsigned long k = 1; k < threads; k++)
		pthread_join(tid[k], NULL);
	wl_finish(&o);
	return 0;
}
