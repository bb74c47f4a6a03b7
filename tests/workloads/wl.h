/* SPDX-License-Identifier: MIT */
/*
 * wl.h: command line and pacing shared by the e2e workloads (the .c files beside it).
 *
 *   NAME [-b BATCHES] [-d DELAY_MS] [-w] [-v] [-t] N
 *
 * N events are fired in BATCHES batches (the last one takes the remainder); the workload sleeps
 * DELAY_MS before every batch, so that a recording with -i 1 spans several intervals. -w waits for
 * SIGUSR1 before the first batch: a test starts the workload, attaches stkrec with -p, waits for
 * its "Tracing ..." line and only then lets the events go, so none fire before the probes exist.
 * -v prints `pid PID` on stdout before waiting. -t prints `elapsed_ns NS` at the end: the time
 * spent firing the events, without start-up and waiting (bench/run divides it by N). Apart from
 * that the workloads print nothing.
 *
 * The workloads build with frame pointers everywhere and without inlining (Makefile,
 * WORKLOAD_CFLAGS): each named function of a workload is one real frame. The helpers here are
 * static inline only so that a workload using a few of them (wl_rate) builds without warnings.
 */
#ifndef STK_WL_H
#define STK_WL_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

struct wl_opts {
	unsigned long n;
	unsigned long batches;
	long delay_ms;
	int wait_signal;
	int verbose;
	int timed;
	struct timespec t0;
};

/* A macro's value as a string, for inline assembly (SYS_getppid). */
#define WL_STR_(x) #x
#define WL_STR(x) WL_STR_(x)

/*
 * long NAME(void): getppid(2) from an assembly routine without CFI that pushes nothing and
 * holds RBP in rbp, as hand-written assembly may (GMP's): the walker can only guess its return
 * address, at rsp (wl_nocfi.c, wl_dlopen.c), whether rbp is no frame pointer (3, or -16: aligned,
 * above rsp, and unreadable), or the ABI's outermost mark (0). No .cfi_startproc: the assembler
 * writes no FDE for it. rbp is kept in r8 meanwhile.
 */
#define WL_NOCFI_GETPPID(name, rbp)					\
	long name(void);						\
	__asm__(".text\n"						\
		".globl " #name "\n"					\
		".type " #name ", @function\n"				\
		#name ":\n"						\
		"	mov %rbp, %r8\n"					\
		"	mov $" #rbp ", %rbp\n"				\
		"	mov $" WL_STR(SYS_getppid) ", %eax\n"		\
		"	syscall\n"						\
		"	mov %r8, %rbp\n"					\
		"	ret\n"						\
		".size " #name ", . - " #name "\n")

static volatile sig_atomic_t wl_go;

static void wl_on_usr1(int sig)
{
	(void)sig;
	wl_go = 1;
}

/* A workload with other options (wl_rate) defines its synopsis before including this file. */
#ifndef WL_SYNOPSIS
#define WL_SYNOPSIS "[-b BATCHES] [-d DELAY_MS] [-w] [-v] [-t] N"
#endif

static inline void wl_usage(const char *prog)
{
	fprintf(stderr, "usage: %s " WL_SYNOPSIS "\n", prog);
	exit(2);
}

static inline unsigned long wl_number(const char *prog, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		wl_usage(prog);
	return v;
}

static inline void wl_parse(int argc, char **argv, struct wl_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->batches = 1;
	while ((c = getopt(argc, argv, "b:d:wvt")) != -1) {
		switch (c) {
		case 'b':
			o->batches = wl_number(argv[0], optarg);
			break;
		case 'd':
			o->delay_ms = (long)wl_number(argv[0], optarg);
			break;
		case 'w':
			o->wait_signal = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 't':
			o->timed = 1;
			break;
		default:
			wl_usage(argv[0]);
		}
	}
	if (optind != argc - 1 || o->batches == 0)
		wl_usage(argv[0]);
	o->n = wl_number(argv[0], argv[optind]);
}

static inline void wl_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Block SIGUSR1 first so a signal sent right after `-v` printed the pid is not lost. Starts the
 * clock of -t.
 */
static inline void wl_wait_start(struct wl_opts *o)
{
	struct sigaction sa = { .sa_handler = wl_on_usr1 };
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGUSR1, &sa, NULL);
	if (o->verbose) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
	}
	if (o->wait_signal)
		while (!wl_go)
			sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	clock_gettime(CLOCK_MONOTONIC, &o->t0);
}

/* End of the run: print the elapsed time with -t. */
static inline void wl_finish(const struct wl_opts *o)
{
	struct timespec t1;

	if (!o->timed)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("elapsed_ns %lld\n", (long long)(t1.tv_sec - o->t0.tv_sec) * 1000000000LL +
					 (t1.tv_nsec - o->t0.tv_nsec));
}

/*
 * System call nr with two arguments; the kernel's result, -errno on failure. On x86_64 this is
 * the syscall instruction itself, inlined into the caller: libc's syscall() and its wrappers
 * (getppid(), nanosleep()) are leaf functions without a frame, so a frame-pointer walk from
 * inside them skips their caller, and the user chain would depend on the libc build. The caller
 * is a noinline leaf that stores the result in a volatile local: GCC drops the frame of a leaf
 * that does not touch the stack even with -fno-omit-frame-pointer, and the local forces one.
 */
static inline __attribute__((always_inline)) long wl_syscall(long nr, long a1, long a2)
{
#if defined(__x86_64__)
	long r;

	__asm__ __volatile__("syscall"
			     : "=a"(r)
			     : "0"(nr), "D"(a1), "S"(a2)
			     : "rcx", "r11", "memory");
	return r;
#else
	long r = syscall(nr, a1, a2);

	return r < 0 ? -errno : r;
#endif
}

/* Events in batch i (0-based) of n split into batches: the last batch takes the remainder. */
static inline unsigned long wl_batch_size(const struct wl_opts *o, unsigned long i)
{
	unsigned long per = o->n / o->batches;

	return i == o->batches - 1 ? o->n - per * (o->batches - 1) : per;
}

/*
 * The whole main of an event workload: options, the wait for SIGUSR1 (-w), then N calls of outer
 * in batches. Always inlined (even under -fno-inline), so that main itself calls outer and the
 * user chain stays main;wl_outer;... as the e2e tests assert.
 */
static inline __attribute__((always_inline)) int wl_main(int argc, char **argv,
							void (*outer)(unsigned long))
{
	struct wl_opts o;

	wl_parse(argc, argv, &o);
	wl_wait_start(&o);
	for (unsigned long b = 0; b < o.batches; b++) {
		wl_sleep_ms(o.delay_ms);
		outer(wl_batch_size(&o, b));
	}
	wl_finish(&o);
	return 0;
}

#endif /* STK_WL_H */
