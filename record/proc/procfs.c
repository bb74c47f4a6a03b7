// SPDX-License-Identifier: MIT
/*
 * procfs.c: lines of /proc/PID/stat and /proc/PID/maps parsed (procmaps.c reads processes with
 * them, objects.c finds the vdso in /proc/self/maps), and a mapping's kind from its path (also
 * for the kernel's mmap records, mmaps.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "proc.h"

int rec_stat_line(const char *line, char *comm, size_t csz, uint64_t *start_ticks)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')'), *p;
	size_t n;
	int field;

	/* comm may hold spaces and parentheses: it runs from the first '(' to the last ')'. */
	if (!open || !close || close < open || !csz)
		return -EINVAL;
	n = close - open - 1;
	if (n >= csz)
		n = csz - 1;
	memcpy(comm, open + 1, n);
	comm[n] = 0;
	/* After ") ": field 3 (state) ... field 22 (starttime). */
	p = close + 1;
	for (field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	if (sscanf(p, " %" SCNu64, start_ticks) != 1)
		return -EINVAL;
	return 0;
}

static uint32_t map_kind(const char *path)
{
	if (!*path)
		return CAP_MAP_ANON_EXEC;
	if (!strcmp(path, "[vdso]"))
		return CAP_MAP_VDSO;
	if (!strncmp(path, "/memfd:", 7))
		return CAP_MAP_MEMFD;
	if (path[0] == '/')
		return CAP_MAP_FILE;
	return CAP_MAP_OTHER;
}

int rec_maps_line(const char *line, struct cap_mapping *m, char *path, size_t psz)
{
	unsigned long long start, end, pgoff, inode;
	unsigned int major, minor;
	char perms[8];
	int pos = 0;
	size_t n;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &major,
		   &minor, &inode, &pos) != 7 || !pos || strlen(perms) < 4)
		return -EINVAL;
	if (perms[2] != 'x')
		return 0;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->dev = makedev(major, minor);
	m->inode = inode;
	n = strcspn(line + pos, "\n");
	if (n >= psz)
		return -EINVAL;
	memcpy(path, line + pos, n);
	path[n] = 0;
	rec_mapping_path(m, path);
	return 1;
}

void rec_mapping_path(struct cap_mapping *m, char *path)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path);

	if (n > sizeof(deleted) - 1 && !strcmp(path + n - (sizeof(deleted) - 1), deleted)) {
		path[n - (sizeof(deleted) - 1)] = 0;
		m->flags |= CAP_MAP_F_DELETED;
	}
	if (!strcmp(path, "//anon"))
		path[0] = 0;	/* perf's name for an anonymous mapping (a JIT's code) */
	m->kind = map_kind(path);
}
