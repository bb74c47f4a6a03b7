// SPDX-License-Identifier: MIT
/*
 * reader.c: the notification reader thread. BPF sends a message when a process execs or is seen
 * for the first time, and the kernel's mmap records (mmaps.c) say what every process maps; a
 * process that lives 20 ms must have its files opened within milliseconds, while map_files still
 * leads to them, also while the main thread drains maps or extracts symbols for a slow
 * interval. The thread waits on both epoll fds and runs the handlers (rec_procs) under one lock,
 * which the main thread takes for its own rec_procs calls.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "proc.h"

struct rec_reader {
	struct rec_probe *probe;
	struct rec_mmaps *mmaps;	/* NULL: BPF's notifications only */
	struct rec_procs *procs;
	struct rec_worker worker;	/* reader_main() */
	pthread_mutex_t lock;
};

/*
 * The kernel's records first: a process BPF reports may be gone, and then they are all that is
 * known of it. The notifications as one batch (rec_procs__hold).
 */
void rec_notifications__handle(struct rec_probe *p, struct rec_mmaps *mm, struct rec_procs *ps,
			       int timeout_ms)
{
	rec_mmaps__consume(mm, ps);
	rec_procs__hold(ps);
	rec_probe__poll(p, timeout_ms);
	rec_procs__release(ps);
}

static void handle_all(struct rec_reader *rd)
{
	pthread_mutex_lock(&rd->lock);
	rec_notifications__handle(rd->probe, rd->mmaps, rd->procs, 0);
	pthread_mutex_unlock(&rd->lock);
}

void rec_reader__catch_up(struct rec_reader *rd)
{
	if (rd)
		rec_mmaps__consume(rd->mmaps, rd->procs);
}

static void *reader_main(void *arg)
{
	struct rec_reader *rd = arg;
	struct pollfd pfd[3] = {
		{ .fd = rec_probe__notify_fd(rd->probe), .events = POLLIN },
		{ .fd = rec_mmaps__fd(rd->mmaps), .events = POLLIN },	/* -1: ignored */
		{ .fd = rd->worker.stop_fd, .events = POLLIN },
	};

	/* No timeout: a thread that woke to look at a flag cost a context switch ten times a second */
	while (!(pfd[2].revents & POLLIN)) {
		if (poll(pfd, 3, -1) > 0)
			handle_all(rd);
	}
	return NULL;
}

struct rec_reader *rec_reader__start(struct rec_probe *p, struct rec_mmaps *mm,
				     struct rec_procs *ps)
{
	struct rec_reader *rd = calloc(1, sizeof(*rd));
	int err;

	if (!rd)
		return NULL;
	rd->probe = p;
	rd->mmaps = mm;
	rd->procs = ps;
	pthread_mutex_init(&rd->lock, NULL);
	err = rec_worker_start(&rd->worker, reader_main, rd);
	if (err) {
		pthread_mutex_destroy(&rd->lock);
		free(rd);
		errno = -err;
		return NULL;
	}
	return rd;
}

void rec_reader__lock(struct rec_reader *rd)
{
	if (rd)
		pthread_mutex_lock(&rd->lock);
}

void rec_reader__unlock(struct rec_reader *rd)
{
	if (rd)
		pthread_mutex_unlock(&rd->lock);
}

void rec_reader__sync(struct rec_reader *rd)
{
	if (!rd)
		return;
	/* A non-blocking poll consumes everything submitted so far, whichever thread runs it. */
	handle_all(rd);
}

void rec_reader__stop(struct rec_reader *rd)
{
	if (!rd)
		return;
	rec_worker_stop(&rd->worker);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}
