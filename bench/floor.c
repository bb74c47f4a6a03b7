// SPDX-License-Identifier: MIT
/*
 * floor: load bench/floor.bpf.c on one event of one process, print READY, count until SIGINT,
 * then print the events counted. bench/run's reference for the per-event cost of counting.
 *
 *   floor -p PID t:CATEGORY:EVENT | u:BINARY:FUNC_OFFSET | usdt:BINARY:PROVIDER:NAME
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static struct bpf_link *attach(struct floor_bpf *s, char *spec, int pid)
{
	char *a = strchr(spec, ':'), *b = a ? strchr(a + 1, ':') : NULL, *c;

	if (!a || !b)
		return NULL;
	*a++ = 0;
	*b++ = 0;
	if (!strcmp(spec, "t"))
		return bpf_program__attach_tracepoint(s->progs.floor_tp, a, b);
	if (!strcmp(spec, "u"))
		return bpf_program__attach_uprobe(s->progs.floor_uprobe, false, pid, a,
						  strtoull(b, NULL, 0));
	c = strchr(b, ':');
	if (!strcmp(spec, "usdt") && c) {
		*c++ = 0;
		return bpf_program__attach_usdt(s->progs.floor_usdt, pid, a, b, c, NULL);
	}
	return NULL;
}

static unsigned long long total(struct floor_bpf *s)
{
	int fd = bpf_map__fd(s->maps.counts);
	unsigned long long sum = 0, v;
	char key[12], next[12];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (!bpf_map_lookup_elem(fd, next, &v))
			sum += v;
		memcpy(key, next, sizeof(key));
		prev = key;
	}
	return sum;
}

int main(int argc, char **argv)
{
	struct bpf_link *link = NULL;
	struct floor_bpf *s;
	int pid;

	if (argc != 4 || strcmp(argv[1], "-p")) {
		fprintf(stderr, "usage: floor -p PID t:CAT:EVENT|u:BIN:OFFSET|usdt:BIN:PROV:NAME\n");
		return 2;
	}
	pid = atoi(argv[2]);
	s = floor_bpf__open();
	if (!s)
		return 1;
	s->rodata->cfg_tgid = pid;
	if (floor_bpf__load(s) || !(link = attach(s, argv[3], pid))) {
		fprintf(stderr, "floor: cannot load or attach: %s\n", strerror(errno));
		floor_bpf__destroy(s);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "READY\n");
	while (!stop)
		pause();
	printf("counted %llu\n", total(s));
	bpf_link__destroy(link);
	floor_bpf__destroy(s);
	return 0;
}
