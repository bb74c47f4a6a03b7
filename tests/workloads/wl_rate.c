/* SPDX-License-Identifier: MIT */
/*
 * wl_rate: enters getppid(2) exactly N times at RATE events per second, through main ->
 * wl_outer -> wl_middle -> wl_getppid (tests/e2e/snoop.sh, t:syscalls:sys_enter_getppid).
 *
 *   wl_rate [-r RATE] [-j THREADS] [-w] [-v] [-t] N
 *
 * -r RATE: events per second over all threads, 0 (default) as fast as possible. Event i of a
 * thread fires at start + i / (RATE / THREADS): a busy-wait on CLOCK_MONOTONIC, not a sleep,
 * since 200,000 events per second leave 5 us between two events. A thread that falls behind
 * fires at once until it is on schedule again, so the total time is N / RATE when it can.
 * -j THREADS: fire from THREADS threads (N split evenly, the first takes the remainder); thread
 * k > 0 starts at wl_thread instead of main. -w, -v, -t: as in wl.h (wait for SIGUSR1, print
 * `pid PID`, print `elapsed_ns NS`).
 *
 * wl_getppid issues the syscall instruction itself, as wl_syscall.c does (see there why).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define MAX_THREADS 64

static double period_ns;	/* between two events of one thread; 0: no pacing */
static volatile sig_atomic_t go;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) long wl_getppid(void)
{
#if defined(__x86_64__)
	volatile long ret;
	long r;

	__asm__ __volatile__("syscall"
			     : "=a"(r)
			     : "0"((long)SYS_getppid)
			     : "rcx", "r11", "memory");
	ret = r;
	return ret;
#else
	return syscall(SYS_getppid);
#endif
}

__attribute__((noinline)) void wl_middle(void)
{
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

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-r RATE] [-j THREADS] [-w] [-v] [-t] N\n", prog);
	exit(2);
}

static unsigned long number(const char *prog, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		usage(prog);
	return v;
}

int main(int argc, char **argv)
{
	unsigned long n, rate = 0, threads = 1, share;
	int wait_signal = 0, verbose = 0, timed = 0, c;
	pthread_t tid[MAX_THREADS];
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t block, old;
	unsigned long long t0;

	while ((c = getopt(argc, argv, "r:j:wvt")) != -1) {
		switch (c) {
		case 'r':
			rate = number(argv[0], optarg);
			break;
		case 'j':
			threads = number(argv[0], optarg);
			break;
		case 'w':
			wait_signal = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 't':
			timed = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc - 1 || threads == 0 || threads > MAX_THREADS)
		usage(argv[0]);
	n = number(argv[0], argv[optind]);
	if (rate)
		period_ns = 1e9 * threads / rate;

	/* SIGUSR1 blocked before the pid is printed, so an early signal is not lost (wl.h) */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGUSR1, &sa, NULL);
	if (verbose) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
	}
	if (wait_signal)
		while (!go)
			sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);

	t0 = now_ns();
	share = n / threads;
	for (unsigned long k = 1; k < threads; k++)
		if (pthread_create(&tid[k], NULL, wl_thread, (void *)share)) {
			perror("pthread_create");
			return 1;
		}
	wl_outer(n - share * (threads - 1));
	for (unsigned long k = 1; k < threads; k++)
		pthread_join(tid[k], NULL);
	if (timed)
		printf("elapsed_ns %llu\n", now_ns() - t0);
	return 0;
}
