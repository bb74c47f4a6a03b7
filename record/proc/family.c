// SPDX-License-Identifier: MIT
/*
 * family.c: the processes descended from given ones, as /proc says now: `stkrec -p PID
 * --children` traces those running when it starts; BPF follows every fork from its attach on
 * (bpf/stkrec.bpf.c inherit_tracing()).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

/* A process and its parent. */
struct parent_of {
	uint32_t pid, ppid;
};

/* The parent of pid from /proc/PID/stat (field 4, after the comm's last ')'); 0 when gone. */
static uint32_t read_ppid(const char *pid)
{
	char path[64], line[1024], *paren;
	unsigned int ppid;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	line[n] = 0;
	paren = strrchr(line, ')');
	return paren && sscanf(paren + 1, " %*c %u", &ppid) == 1 ? ppid : 0;
}

/* Every process with its parent. 0 or -errno. */
static int list_parents(struct parent_of **v, uint32_t *n)
{
	uint32_t cap = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int err = 0;

	*v = NULL;
	*n = 0;
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		uint32_t ppid;

		if (!isdigit((unsigned char)d->d_name[0]) || !(ppid = read_ppid(d->d_name)))
			continue;
		err = rec_grow(v, *n, &cap, sizeof(**v), 256);
		if (!err)
			(*v)[(*n)++] = (struct parent_of){ strtoul(d->d_name, NULL, 10), ppid };
	}
	closedir(dir);
	return err;
}

static bool listed(const uint32_t *ids, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int rec_descendants(const uint32_t *roots, uint32_t nroots, uint32_t **out, uint32_t *nout)
{
	struct parent_of *all = NULL;
	uint32_t nall = 0, n = 0, cap = 0, *v = NULL;
	bool grew = true;
	int err = list_parents(&all, &nall);

	/* a pass per generation: a child is listed once its parent is (a root or listed) */
	while (!err && grew) {
		grew = false;
		for (uint32_t i = 0; !err && i < nall; i++) {
			if (listed(v, n, all[i].pid) || listed(roots, nroots, all[i].pid) ||
			    (!listed(roots, nroots, all[i].ppid) && !listed(v, n, all[i].ppid)))
				continue;
			err = rec_grow(&v, n, &cap, sizeof(*v), 16);
			if (!err)
				v[n++] = all[i].pid;
			grew = true;
		}
	}
	free(all);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*nout = n;
	return 0;
}
