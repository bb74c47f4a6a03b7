// SPDX-License-Identifier: MIT
/* main.c: stkreport: options -> struct rep_opts -> rep_run(). Exit 0, 1 on error, 2 on usage. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* The only mutable global of stkreport: Ctrl-C during --sql (sql.c polls it). */
static volatile sig_atomic_t interrupted;

/* The grace the engine gets to see the flag: it polls every 1000 steps, a few microseconds. */
#define INTERRUPT_GRACE_S 1

/*
 * One step of the engine can run long (a single printf('%.*c', 2000000000, 'x') call builds its
 * string for tens of seconds): if the query has not stopped after the grace, stop the process.
 */
static void on_sigalrm(int sig)
{
	static const char msg[] = "stkreport: --sql: interrupted\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);	/* nothing else to do if it fails */
	_exit(EXIT_FAILURE);
}

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
	alarm(INTERRUPT_GRACE_S);
}

/*
 * A query may run for ever (a recursive CTE); Ctrl-C stops it cleanly, with the database
 * closed and one line saying so. Elsewhere Ctrl-C keeps its default: nothing to clean up.
 */
static void catch_sigint(struct rep_opts *opts)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigalrm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		return;
	sa.sa_handler = on_sigint;
	if (!sigaction(SIGINT, &sa, NULL))
		opts->interrupted = &interrupted;
}

int main(int argc, char **argv)
{
	struct rep_opts opts;
	int err;

	err = rep_parse_opts(argc, argv, &opts);
	if (!err && opts.sql)
		catch_sigint(&opts);
	if (!err)
		err = rep_run(&opts) ? EXIT_FAILURE : EXIT_SUCCESS;
	else
		err = err > 0 ? EXIT_SUCCESS : 2;
	rep_opts__free(&opts);
	return err;
}
