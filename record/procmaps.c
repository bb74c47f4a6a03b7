// SPDX-License-Identifier: MIT
/*
 * procmaps.c: processes as early as first seen. /proc/PID/stat (comm, start time), exe, and the
 * executable mappings of /proc/PID/maps with each file's GNU build-id, read through
 * /proc/PID/map_files (or /proc/PID/root) and checked against the dev/inode of the maps line, so
 * a replaced file or another mount namespace never lends a wrong build-id.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "rec.h"

struct proc_entry {
	uint32_t pid;
	bool pending;		/* read since the last PROCS record */
	struct cap_process rec;
};

struct build_id {
	uint64_t dev, inode;
	uint32_t len;		/* 0: unreadable or none */
	uint8_t id[CAP_BUILD_ID_MAX];
};

struct rec_procs {
	void *procs;		/* tsearch tree of struct proc_entry, by pid */
	void *build_ids;	/* tsearch tree of struct build_id, by (dev, inode) */
	struct proc_entry **pending;
	uint32_t npending, cap;
	struct cap_process *out;
	long clk_tck;
};

static int cmp_proc(const void *a, const void *b)
{
	uint32_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;

	return x < y ? -1 : x > y;
}

static int cmp_build_id(const void *a, const void *b)
{
	const struct build_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

struct rec_procs *rec_procs__new(void)
{
	struct rec_procs *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->clk_tck = sysconf(_SC_CLK_TCK);
	if (ps->clk_tck <= 0)
		ps->clk_tck = 100;
	elf_version(EV_CURRENT);
	return ps;
}

static void clear_process(struct cap_process *p)
{
	for (uint32_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p->comm);
	free(p->exe);
	p->maps = NULL;
	p->nmaps = 0;
	p->comm = NULL;
	p->exe = NULL;
}

static void free_entry(void *e)
{
	clear_process(&((struct proc_entry *)e)->rec);
	free(e);
}

void rec_procs__free(struct rec_procs *ps)
{
	if (!ps)
		return;
	tdestroy(ps->procs, free_entry);
	tdestroy(ps->build_ids, free);
	free(ps->pending);
	free(ps->out);
	free(ps);
}

/* ---- parsing ------------------------------------------------------------------------------- */

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
	static const char deleted[] = " (deleted)";
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
	n = strlen(path);
	if (n > sizeof(deleted) - 1 && !strcmp(path + n - (sizeof(deleted) - 1), deleted)) {
		path[n - (sizeof(deleted) - 1)] = 0;
		m->flags |= CAP_MAP_F_DELETED;
	}
	m->kind = map_kind(path);
	return 1;
}

/* ---- build-ids ---------------------------------------------------------------------------- */

static int open_checked(const char *path, uint64_t dev, uint64_t inode)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_dev != dev || st.st_ino != inode) {
		close(fd);
		return -1;
	}
	return fd;
}

static void read_build_id(int fd, struct build_id *b)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	ssize_t n;

	if (!e)
		return;
	n = dwelf_elf_gnu_build_id(e, &id);
	if (n > 0 && n <= (ssize_t)CAP_BUILD_ID_MAX) {
		memcpy(b->id, id, n);
		b->len = n;
	}
	elf_end(e);
}

static const struct build_id *lookup_build_id(struct rec_procs *ps, uint32_t pid,
					      const struct cap_mapping *m)
{
	struct build_id key = { .dev = m->dev, .inode = m->inode }, *b, **found;
	char path[PATH_MAX + 64];
	int fd;

	found = tfind(&key, &ps->build_ids, cmp_build_id);
	if (found)
		return *found;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	*b = key;
	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	fd = open_checked(path, m->dev, m->inode);
	if (fd < 0 && m->kind == CAP_MAP_FILE) {
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m->path);
		fd = open_checked(path, m->dev, m->inode);
	}
	if (fd >= 0) {
		read_build_id(fd, b);
		close(fd);
	}
	/* Cached also when unreadable: the same (dev, inode) will not become readable. */
	if (!tsearch(b, &ps->build_ids, cmp_build_id)) {
		free(b);
		return NULL;
	}
	return b;
}

static void add_build_id(struct rec_procs *ps, uint32_t pid, struct cap_mapping *m)
{
	const struct build_id *b = NULL;

	if (m->kind == CAP_MAP_FILE || m->kind == CAP_MAP_MEMFD)
		b = lookup_build_id(ps, pid, m);
	if (b && b->len) {
		memcpy(m->build_id, b->id, b->len);
		m->build_id_len = b->len;
	} else {
		m->flags |= CAP_MAP_F_NO_BUILD_ID;
	}
}

/* ---- reading a process ------------------------------------------------------------------- */

static int read_stat(struct rec_procs *ps, uint32_t pid, char *comm, size_t csz, uint64_t *start,
		     char *state)
{
	char path[64], line[1024];
	uint64_t ticks;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	err = fgets(line, sizeof(line), f) ? rec_stat_line(line, comm, csz, &ticks) : -EINVAL;
	if (!err)
		*state = strrchr(line, ')')[1] ? strrchr(line, ')')[2] : 0;
	fclose(f);
	if (!err)
		*start = ticks * (1000000000ull / ps->clk_tck);
	return err;
}

static char *read_exe(uint32_t pid)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		n = 0;	/* kernel threads have none */
	target[n] = 0;
	return strdup(target);
}

static int push_mapping(struct cap_process *p, const struct cap_mapping *m, const char *path)
{
	struct cap_mapping *v = realloc(p->maps, (p->nmaps + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	p->maps = v;
	v[p->nmaps] = *m;
	v[p->nmaps].path = strdup(path);
	if (!v[p->nmaps].path)
		return -ENOMEM;
	p->nmaps++;
	return 0;
}

static int read_maps(struct rec_procs *ps, uint32_t pid, struct cap_process *p)
{
	char path[64], line[PATH_MAX + 256], file[PATH_MAX];
	struct cap_mapping m;
	int err = 0, r;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		r = rec_maps_line(line, &m, file, sizeof(file));
		if (r <= 0)
			continue;
		m.path = file;
		add_build_id(ps, pid, &m);
		err = push_mapping(p, &m, file);
	}
	fclose(f);
	return err;
}

/* Fill p from /proc; -ENOENT (or -ESRCH) when the process is gone. */
static int read_process(struct rec_procs *ps, uint32_t pid, struct cap_process *p)
{
	char comm[CAP_COMM_LEN], state;
	int err = read_stat(ps, pid, comm, sizeof(comm), &p->start_time, &state);

	if (err)
		return err;
	p->pid = pid;
	p->comm = strdup(comm);
	p->exe = read_exe(pid);
	if (!p->comm || !p->exe)
		return -ENOMEM;
	if (state == 'Z' || state == 'X')
		return -ESRCH;	/* a zombie: its mappings are gone already */
	return read_maps(ps, pid, p);
}

static struct proc_entry *find_entry(struct rec_procs *ps, uint32_t pid)
{
	struct proc_entry key = { .pid = pid }, **found = tfind(&key, &ps->procs, cmp_proc);

	return found ? *found : NULL;
}

static struct proc_entry *get_entry(struct rec_procs *ps, uint32_t pid)
{
	struct proc_entry *e = find_entry(ps, pid);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->pid = pid;
	if (!tsearch(e, &ps->procs, cmp_proc)) {
		free(e);
		return NULL;
	}
	return e;
}

static int mark_pending(struct rec_procs *ps, struct proc_entry *e)
{
	if (e->pending)
		return 0;
	if (ps->npending == ps->cap) {
		uint32_t cap = ps->cap ? ps->cap * 2 : 64;
		struct proc_entry **v = realloc(ps->pending, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ps->pending = v;
		ps->cap = cap;
	}
	ps->pending[ps->npending++] = e;
	e->pending = true;
	return 0;
}

static int replace_record(struct rec_procs *ps, struct proc_entry *e, struct cap_process *p)
{
	clear_process(&e->rec);
	e->rec = *p;
	return mark_pending(ps, e);
}

int rec_procs__note(struct rec_procs *ps, uint32_t pid, bool force)
{
	struct proc_entry *e = find_entry(ps, pid);
	struct cap_process p = { 0 };
	char comm[CAP_COMM_LEN], state;
	uint64_t start;
	int err;

	if (!pid)
		return 0;
	if (e && !force && !(e->rec.flags & CAP_PROC_F_NO_MAPS)) {
		/* Known: read again only when the pid now belongs to another process. */
		if (read_stat(ps, pid, comm, sizeof(comm), &start, &state) || start == e->rec.start_time)
			return 0;
	}
	err = read_process(ps, pid, &p);
	if (err) {
		clear_process(&p);
		return err;
	}
	e = e ? e : get_entry(ps, pid);
	if (!e) {
		clear_process(&p);
		return -ENOMEM;
	}
	return replace_record(ps, e, &p);
}

bool rec_procs__ensure(struct rec_procs *ps, uint32_t pid, const char *comm)
{
	struct proc_entry *e = find_entry(ps, pid);
	struct cap_process p = { 0 };

	if (!pid)
		return true;
	if (e)
		return !(e->rec.flags & CAP_PROC_F_NO_MAPS);
	if (!rec_procs__note(ps, pid, false))
		return true;
	/* Gone before we could read it: a record that says so, with the comm BPF saw. */
	e = get_entry(ps, pid);
	if (!e)
		return false;
	p.pid = pid;
	p.flags = CAP_PROC_F_NO_MAPS;
	p.comm = strndup(comm, CAP_COMM_LEN - 1);
	p.exe = strdup("");
	replace_record(ps, e, &p);
	return false;
}

void rec_procs__pending(struct rec_procs *ps, struct cap_procs *out)
{
	struct cap_process *v = realloc(ps->out, (ps->npending ? ps->npending : 1) * sizeof(*v));

	out->count = 0;
	out->procs = NULL;
	if (!v)
		return;
	ps->out = v;
	for (uint32_t i = 0; i < ps->npending; i++)
		v[i] = ps->pending[i]->rec;
	out->count = ps->npending;
	out->procs = v;
}

void rec_procs__written(struct rec_procs *ps)
{
	/* Keep pid, start time and flags (to recognise the process later); drop the rest. */
	for (uint32_t i = 0; i < ps->npending; i++) {
		ps->pending[i]->pending = false;
		clear_process(&ps->pending[i]->rec);
	}
	ps->npending = 0;
}
