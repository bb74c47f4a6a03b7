// SPDX-License-Identifier: MIT
/* main.c: stkrec's entry point: options, privilege check, signals, rec_run(). */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec.h"

static void on_signal(int sig)
{
	if (sig == SIGHUP || sig == SIGUSR2)
		rec_rotate_now = 1;
	else if (sig == SIGUSR1)
		rec_dump_now = 1;
	else
		rec_stop = 1;
}

/*
 * No SA_RESTART: the ring-buffer poll returns at once and the loop sees the flag. SIGHUP and
 * SIGUSR2 rotate with --rotate (perf's --switch-output takes SIGUSR2), SIGUSR1 dumps the flight
 * recorder; otherwise they keep their default action.
 */
static void catch_signals(const struct rec_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->rotate) {
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
	}
	if (o->flight_s)
		sigaction(SIGUSR1, &sa, NULL);
}

int main(int argc, char **argv)
{
	struct rec_opts opts;
	int err;

	err = rec_parse_opts(argc, argv, &opts);
	if (err) {
		rec_opts__free(&opts);
		return err > 0 ? EXIT_SUCCESS : 2;
	}
	if (geteuid() != 0) {
		rec_err(-EPERM, "must be run as root (BPF and perf events need CAP_BPF/CAP_PERFMON)");
		rec_opts__free(&opts);
		return EXIT_FAILURE;
	}
	catch_signals(&opts);
	/*
	 * Large blocks (unwind tables being built, symbol tables, a large chunk) each in their own
	 * mapping, given back when freed. glibc's default raises this threshold to the largest
	 * block freed so far, after which such blocks come from the heap, and a recording that
	 * met one large object early keeps that much resident to its end (bench/churn).
	 */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	err = opts.list ? rec_list(&opts) : rec_run(&opts);
	rec_opts__free(&opts);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}
