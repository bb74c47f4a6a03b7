// SPDX-License-Identifier: MIT
/*
 * reader.c: the notification reader thread. BPF sends a message when a process execs or is seen
 * for the first time; a process that lives 20 ms must have its maps read within milliseconds,
 * also while the main thread drains maps or extracts symbols for a slow interval. The thread
 * waits on the ring buffer's epoll fd and runs the handlers (rec_procs__note) under one lock,
 * which the main thread takes for its own rec_procs calls.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>

#include "rec.h"

/* Wait at most this long between checks of the stop flag. */
#define WAIT_MS 100

struct rec_reader {
	struct rec_probe *probe;
	pthread_t thread;
	pthread_mutex_t lock;
	int stop;		/* __atomic: set by __stop, read by the thread */
};

static void *reader_main(void *arg)
{
	struct rec_reader *rd = arg;
	struct pollfd pfd = { .fd = rec_probe__notify_fd(rd->probe), .events = POLLIN };

	while (!__atomic_load_n(&rd->stop, __ATOMIC_RELAXED)) {
		if (poll(&pfd, 1, WAIT_MS) <= 0)
			continue;
		pthread_mutex_lock(&rd->lock);
		rec_probe__poll(rd->probe, 0);
		pthread_mutex_unlock(&rd->lock);
	}
	return NULL;
}

struct rec_reader *rec_reader__start(struct rec_probe *p)
{
	struct rec_reader *rd = calloc(1, sizeof(*rd));
	int err;

	if (!rd)
		return NULL;
	rd->probe = p;
	pthread_mutex_init(&rd->lock, NULL);
	err = pthread_create(&rd->thread, NULL, reader_main, rd);
	if (err) {
		pthread_mutex_destroy(&rd->lock);
		free(rd);
		errno = err;
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
	pthread_mutex_lock(&rd->lock);
	rec_probe__poll(rd->probe, 0);
	pthread_mutex_unlock(&rd->lock);
}

void rec_reader__stop(struct rec_reader *rd)
{
	if (!rd)
		return;
	__atomic_store_n(&rd->stop, 1, __ATOMIC_RELAXED);
	pthread_join(rd->thread, NULL);
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}
