// SPDX-License-Identifier: MIT
/*
 * base.c: what every room of record/ uses: messages, the clock, threads started with signals
 * blocked (and raised in priority), eventfd wake-ups, arrays that grow by doubling.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>

#include "base.h"

int rec_err(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("stkrec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return err;
}

uint64_t rec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int rec_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

void rec_thread_urgent(void)
{
	/* a thread id names that thread alone (setpriority(2), BUGS); unprivileged, it fails */
	(void)setpriority(PRIO_PROCESS, gettid(), -20);
}

void rec_eventfd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));

	(void)n;	/* fails only with the counter at its maximum: the fd is readable anyway */
}

int rec_worker_start(struct rec_worker *w, void *(*fn)(void *), void *arg)
{
	int err;

	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0)
		return -errno;
	err = rec_thread_start(&w->thread, fn, arg);
	if (err) {
		close(w->stop_fd);
		*w = (struct rec_worker){ 0 };
		return -err;
	}
	w->running = true;
	return 0;
}

void rec_worker_stop(struct rec_worker *w)
{
	if (!w->running)
		return;
	rec_eventfd_signal(w->stop_fd);
	pthread_join(w->thread, NULL);
	close(w->stop_fd);
	*w = (struct rec_worker){ 0 };
}

int rec_grow(void *arrayp, uint32_t n, uint32_t *cap, size_t sz, uint32_t first)
{
	void **array = arrayp, *v;
	uint32_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	v = realloc(*array, (size_t)c * sz);
	if (!v)
		return -ENOMEM;
	*array = v;
	*cap = c;
	return 0;
}
