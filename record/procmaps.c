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

/* An executable mapping reduced to what finding the objects hit by a stack needs. */
struct range {
	uint64_t start, end;
	struct rec_object *obj;	/* NULL: no object (anonymous, unreadable) */
};

struct proc_entry {
	uint32_t pid;
	bool pending;		/* read since the last PROCS record */
	bool other_ns;		/* in another mount namespace than stkrec */
	uint32_t uid;		/* struct rec_proc_info */
	struct cap_process rec;
	struct range *ranges;	/* sorted by start; kept after the record is written */
	uint32_t nranges;
};

struct rec_procs {
	void *procs;		/* tsearch tree of struct proc_entry, by pid */
	struct rec_objects *objects;
	struct rec_unwind *unwind;
	struct proc_entry **pending;
	uint32_t npending, cap;
	struct cap_process *out;
	struct rec_object **hits;
	uint32_t nhits, hits_cap;
	char mnt_ns[64];	/* readlink of /proc/self/ns/mnt */
	long clk_tck;
};

static int cmp_proc(const void *a, const void *b)
{
	uint32_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;

	return x < y ? -1 : x > y;
}

/* "mnt:[4026531841]" of pid (0: stkrec itself); "" when unreadable. */
static void read_mnt_ns(uint32_t pid, char *buf, size_t sz)
{
	char path[64];
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/mnt");
	n = readlink(path, buf, sz - 1);
	buf[n > 0 ? n : 0] = 0;
}

struct rec_procs *rec_procs__new(struct rec_unwind *unwind)
{
	struct rec_procs *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->clk_tck = sysconf(_SC_CLK_TCK);
	if (ps->clk_tck <= 0)
		ps->clk_tck = 100;
	ps->unwind = unwind;
	ps->objects = rec_objects__new(unwind);
	if (!ps->objects) {
		free(ps);
		return NULL;
	}
	read_mnt_ns(0, ps->mnt_ns, sizeof(ps->mnt_ns));
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

static void free_entry(void *p)
{
	struct proc_entry *e = p;

	clear_process(&e->rec);
	free(e->ranges);
	free(e);
}

void rec_procs__free(struct rec_procs *ps)
{
	if (!ps)
		return;
	tdestroy(ps->procs, free_entry);
	rec_objects__free(ps->objects);
	free(ps->pending);
	free(ps->hits);
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

/* What reading /proc/PID yields: the record and the object of each executable mapping. */
struct proc_read {
	struct cap_process p;
	struct range *ranges;
	uint32_t nranges;
	bool other_ns;
	uint32_t uid;
	uint64_t read_ns;	/* when /proc/PID/maps was opened */
};

static void clear_read(struct proc_read *r)
{
	clear_process(&r->p);
	free(r->ranges);
	r->ranges = NULL;
	r->nranges = 0;
}

static int push_range(struct proc_read *r, const struct cap_mapping *m, struct rec_object *obj)
{
	struct range *v = realloc(r->ranges, (r->nranges + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->ranges = v;
	v[r->nranges++] = (struct range){ m->start, m->end, obj };
	return 0;
}

static int read_maps(struct rec_procs *ps, uint32_t pid, struct proc_read *r)
{
	char path[64], line[PATH_MAX + 256], file[PATH_MAX];
	struct rec_object *obj;
	struct cap_mapping m;
	int err = 0, rc;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		rc = rec_maps_line(line, &m, file, sizeof(file));
		if (rc <= 0)
			continue;
		m.path = file;
		/* Opens the file now and holds it: the process may exit, the file go away. */
		obj = rec_objects__get(ps->objects, pid, &m, r->other_ns);
		err = push_mapping(&r->p, &m, file);
		if (!err)
			err = push_range(r, &m, obj);
	}
	fclose(f);
	return err;
}

static uint32_t proc_owner(uint32_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) ? 0 : st.st_uid;
}

/* Fill r from /proc; -ENOENT (or -ESRCH) when the process is gone. */
static int read_process(struct rec_procs *ps, uint32_t pid, struct proc_read *r)
{
	struct cap_process *p = &r->p;
	char comm[CAP_COMM_LEN], state, ns[64];
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
	r->uid = proc_owner(pid);
	read_mnt_ns(pid, ns, sizeof(ns));
	r->other_ns = *ns && *ps->mnt_ns && strcmp(ns, ps->mnt_ns);
	r->read_ns = rec_now_ns();
	err = read_maps(ps, pid, r);
	/*
	 * No executable mapping at all: the process is past exit_mm() but not yet a zombie (or is
	 * a kernel thread, which has no user frames to name). Say it is gone, so its record says
	 * NO_MAPS instead of sending every user frame to "address outside any mapping".
	 */
	if (!err && !p->nmaps)
		err = -ESRCH;
	return err;
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

/* The walker's view of the process: its mappings with their objects' unwind tables. */
static int publish_unwind(struct rec_procs *ps, const struct proc_read *r,
			  const struct rec_miss *miss)
{
	/* ranges and p.maps were pushed together: one entry per executable mapping */
	struct rec_uread rd = { .maps = r->p.maps, .n = r->nranges, .read_ns = r->read_ns,
				.miss = *miss };
	struct rec_utable **tables;
	int err;

	if (!ps->unwind)
		return 0;
	tables = calloc(r->nranges ? r->nranges : 1, sizeof(*tables));
	if (!tables)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->nranges; i++)
		tables[i] = rec_object__utable(r->ranges[i].obj);
	rd.tables = tables;
	err = rec_unwind__proc(ps->unwind, r->p.pid, &rd);
	free(tables);
	return err;
}

static int replace_record(struct rec_procs *ps, struct proc_entry *e, struct proc_read *r)
{
	clear_process(&e->rec);
	free(e->ranges);
	e->rec = r->p;
	e->ranges = r->ranges;
	e->nranges = r->nranges;
	e->other_ns = r->other_ns;
	e->uid = r->uid;
	return mark_pending(ps, e);
}

/* Read pid as why says; miss: what the walker did not find (rec_procs__recheck). */
static int note(struct rec_procs *ps, uint32_t pid, enum rec_read_why why,
		const struct rec_miss *miss)
{
	struct proc_entry *e = find_entry(ps, pid);
	struct proc_read r = { 0 };
	char comm[CAP_COMM_LEN], state;
	uint64_t start;
	int err;

	if (!pid)
		return 0;
	if (e && why == REC_READ_IF_NEW && !(e->rec.flags & CAP_PROC_F_NO_MAPS)) {
		/* Known: read again only when the pid now belongs to another process. */
		if (read_stat(ps, pid, comm, sizeof(comm), &start, &state) || start == e->rec.start_time)
			return 0;
	}
	err = read_process(ps, pid, &r);
	if (err) {
		clear_read(&r);
		return err;
	}
	e = e ? e : get_entry(ps, pid);
	err = e ? publish_unwind(ps, &r, miss) : -ENOMEM;
	if (err) {
		clear_read(&r);
		return err;
	}
	return replace_record(ps, e, &r);
}

int rec_procs__note(struct rec_procs *ps, uint32_t pid, enum rec_read_why why)
{
	static const struct rec_miss none;

	return note(ps, pid, why, &none);
}

int rec_procs__recheck(struct rec_procs *ps, uint32_t pid, const struct rec_miss *miss)
{
	return note(ps, pid, REC_READ_AGAIN, miss);
}

bool rec_procs__ensure(struct rec_procs *ps, uint32_t pid, const char *comm)
{
	struct proc_entry *e = find_entry(ps, pid);
	struct proc_read r = { 0 };
	struct cap_process *p = &r.p;

	if (!pid)
		return true;
	if (e)
		return !(e->rec.flags & CAP_PROC_F_NO_MAPS);
	if (!rec_procs__note(ps, pid, REC_READ_IF_NEW))
		return true;
	/* Gone before we could read it: a record that says so, with the comm BPF saw. */
	e = get_entry(ps, pid);
	if (!e)
		return false;
	p->pid = pid;
	p->flags = CAP_PROC_F_NO_MAPS;
	p->comm = strndup(comm, CAP_COMM_LEN - 1);
	p->exe = strdup("");
	replace_record(ps, e, &r);
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

/* ---- objects hit by stacks ---------------------------------------------------------------- */

static struct rec_object *object_at(const struct proc_entry *e, uint64_t addr)
{
	uint32_t lo = 0, hi = e->nranges;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < e->ranges[mid].start)
			hi = mid;
		else if (addr >= e->ranges[mid].end)
			lo = mid + 1;
		else
			return e->ranges[mid].obj;
	}
	return NULL;
}

static int push_hit(struct rec_procs *ps, struct rec_object *obj)
{
	if (!obj || !rec_object__queue(obj))
		return 0;
	if (ps->nhits == ps->hits_cap) {
		uint32_t cap = ps->hits_cap ? ps->hits_cap * 2 : 64;
		struct rec_object **v = realloc(ps->hits, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ps->hits = v;
		ps->hits_cap = cap;
	}
	ps->hits[ps->nhits++] = obj;
	return 0;
}

int rec_procs__hit_objects(struct rec_procs *ps, const struct cap_interval *iv,
			   struct rec_object ***objs, uint32_t *n)
{
	/*
	 * walked[s]: pid + 1 of the last process whose rows walked user stack s. A --snoop batch
	 * has a row per event, mostly repeating a few (process, stack) pairs: walk each once.
	 */
	uint32_t *walked = calloc(iv->nustacks ? iv->nustacks : 1, sizeof(*walked));
	int err = 0;

	if (!walked)
		return -ENOMEM;
	ps->nhits = 0;
	for (uint32_t i = 0; i < iv->nrows && !err; i++) {
		const struct cap_row *row = &iv->rows[i];
		const struct proc_entry *e;
		const struct cap_stack *s;

		if (!row->ustack || row->ustack > iv->nustacks ||
		    walked[row->ustack - 1] == row->pid + 1 || !(e = find_entry(ps, row->pid)))
			continue;
		walked[row->ustack - 1] = row->pid + 1;
		s = &iv->ustacks[row->ustack - 1];
		for (uint32_t j = 0; j < s->nips && !err; j++)
			err = push_hit(ps, object_at(e, s->ips[j]));
	}
	free(walked);
	*objs = ps->hits;
	*n = ps->nhits;
	return err;
}

struct rec_objects *rec_procs__objects(struct rec_procs *ps)
{
	return ps->objects;
}

int rec_procs__info(struct rec_procs *ps, uint32_t pid, struct rec_proc_info *info)
{
	const struct proc_entry *e = find_entry(ps, pid);

	if (!e || (e->rec.flags & CAP_PROC_F_NO_MAPS))
		return -ENOENT;
	info->start_time = e->rec.start_time;
	info->other_ns = e->other_ns;
	info->uid = e->uid;
	return 0;
}
