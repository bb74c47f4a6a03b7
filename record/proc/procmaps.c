// SPDX-License-Identifier: MIT
/*
 * procmaps.c: every process's executable mappings, per process, in time order. Two sources:
 *   - /proc/PID (stat, exe, maps), read once when BPF first sees a process older than the
 *     recording, the only source for those (again at its exec and when the unwinder misses an
 *     address only after a record was lost: followed());
 *   - the kernel's mmap2/exec/fork/exit records (mmaps.c), which see the libraries ld.so maps
 *     after the /proc read, dlopen()s, and processes that are gone before anyone could read them.
 * Each mapping keeps the time it was made (or read): a record older than the last /proc read is
 * in that read already, one older than the last exec belongs to the old image.
 *
 * Every mapping's object is opened through /proc/PID/map_files (or /proc/PID/root, or for a
 * process gone already its path, dev/inode checked), so a replaced file or another mount
 * namespace never lends a wrong build-id. Objects are opened, and mappings written to the
 * capture and to the BPF walker, only for processes with events ("wanted"); the others cost an
 * entry until they exit. Entries of exited processes are dropped one interval after the exit,
 * once every event they had is drained and their last record written.
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <sys/stat.h>

#include "proc.h"

/* An executable mapping and what stkrec knows of it. */
struct pmap {
	struct cap_mapping m;	/* m.path owned; build-id and flags set once looked up */
	struct rec_object *obj;	/* NULL: none (anonymous, unreadable) or not looked up yet */
	uint64_t added_ns;	/* when it was mapped, or read from /proc (CLOCK_MONOTONIC) */
	uint32_t gone_epoch;	/* 0; or rec_procs.epoch when a read no longer listed it (keep_gone) */
	bool looked_up;		/* obj opened (or known to be none) */
};

/*
 * An image an exec (or a new process at the pid) replaced, kept while rows may still name it:
 * events of the old image drained with the new image's in the same interval (struct stk_key
 * image_ns, --snoop's event times), until two intervals end.
 */
struct old_image {
	uint64_t until_ns;	/* the exec or fork that ended it: rows before it are its own */
	uint32_t epoch;		/* rec_procs.epoch when it ended */
	int32_t part;		/* the interval part whose rows it names, -1: none (rec_procs__split) */
	struct cap_process rec;	/* comm and exe owned, without maps */
	struct pmap *maps;	/* paths owned; objects lent by rec_procs.objects */
	uint32_t nmaps;
};

struct proc_entry {
	uint32_t pid;
	bool pending;		/* changed since its last PROCS record */
	bool wanted;		/* it has events: written, objects opened, given to the walker */
	bool complete;		/* every mapping known: read from /proc, or followed since exec */
	bool from_proc;		/* start time, exe, uid and namespace read from /proc */
	bool dirty;		/* on the list of entries to give the walker again */
	bool ns_known;		/* other_ns is known: read from /proc, or asked when gone */
	bool other_ns;		/* in another mount namespace than stkrec */
	uint32_t uid;		/* struct rec_proc_info */
	uint32_t exit_epoch;	/* rec_procs.epoch when its exit was seen; 0: alive */
	uint64_t snapshot_ns;	/* the last /proc read: older records are in it */
	uint64_t exec_ns;	/* the last exec: older records are of the old image */
	uint64_t image_ns;	/* the current image's start: its exec or fork, as applied */
	uint64_t bpf_exec_ns;	/* the last exec BPF told of (rec_procs__exec_seen) */
	struct old_image *old;	/* oldest first */
	uint32_t nold;
	int32_t part;		/* the interval part its current image is written before; -1:
				 * none (rec_procs__split) */
	bool split;		/* on rec_procs.split: rows of an old image in this interval */
	bool due;		/* pending at rec_procs__split(): written before the interval's rows */
	/*
	 * Old images kept so far, and their number at rec_procs__split(): the reader may apply an
	 * exec between the split and the interval's process records, and the image current at the
	 * split, the one its rows ran in, is then an old one (split_image()).
	 */
	uint32_t images, split_images;
	struct cap_process rec;	/* without maps: those are built for each PROCS record */
	struct pmap *maps;	/* sorted by start, not overlapping */
	uint32_t nmaps;
};

/* A list of entries, for pending records and the walker's updates. */
struct entry_list {
	struct proc_entry **v;
	uint32_t n, cap;
};

struct rec_procs {
	void *procs;		/* tsearch tree of struct proc_entry, by pid */
	struct rec_objects *objects;
	struct rec_unwind *unwind;
	struct entry_list pending;
	struct entry_list dirty;
	struct entry_list split;	/* entries with rows of an old image in this interval */
	struct entry_list aged;		/* entries with old images */
	uint32_t *exited;	/* pids whose exit was seen, until their entry goes */
	uint32_t nexited, exited_cap;
	uint32_t epoch;		/* rec_procs__retire() calls, from 1 */
	struct rec_procs_stats stats;
	uint64_t known_ns;	/* the kernel's records up to then are applied (rec_procs__publish) */
	bool following;		/* every record is applied (rec_procs__follow) */
	bool held;		/* a batch of notifications is read: publish later (rec_procs__hold) */
	struct cap_process *out;
	struct cap_mapping *out_maps;
	struct rec_object **hits;
	uint32_t nhits, hits_cap;
	char mnt_ns[64];	/* readlink of /proc/self/ns/mnt */
	long clk_tck;
	bool gate_last;		/* maps lists end with the vsyscall page (stkrec's own does) */
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

/* The line of the vsyscall page, last in a 64-bit process's maps where the kernel has one. */
#define GATE_LINE "ffffffffff600000-"

static bool self_maps_end_with_gate(void)
{
	char line[PATH_MAX + 256] = "";
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		;
	fclose(f);
	return !strncmp(line, GATE_LINE, sizeof(GATE_LINE) - 1);
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
	ps->epoch = 1;
	ps->objects = rec_objects__new(unwind);
	if (!ps->objects) {
		free(ps);
		return NULL;
	}
	read_mnt_ns(0, ps->mnt_ns, sizeof(ps->mnt_ns));
	ps->gate_last = self_maps_end_with_gate();
	return ps;
}

static void free_maps(struct pmap *maps, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(maps[i].m.path);
	free(maps);
}

static void clear_maps(struct proc_entry *e)
{
	free_maps(e->maps, e->nmaps);
	e->maps = NULL;
	e->nmaps = 0;
}

static void free_old(struct old_image *o)
{
	free_maps(o->maps, o->nmaps);
	free(o->rec.comm);
	free(o->rec.exe);
}

static void free_entry(void *p)
{
	struct proc_entry *e = p;

	for (uint32_t i = 0; i < e->nold; i++)
		free_old(&e->old[i]);
	free(e->old);
	clear_maps(e);
	free(e->rec.comm);
	free(e->rec.exe);
	free(e);
}

void rec_procs__free(struct rec_procs *ps)
{
	if (!ps)
		return;
	tdestroy(ps->procs, free_entry);
	rec_objects__free(ps->objects);
	free(ps->pending.v);
	free(ps->dirty.v);
	free(ps->split.v);
	free(ps->aged.v);
	free(ps->exited);
	free(ps->hits);
	free(ps->out);
	free(ps->out_maps);
	free(ps);
}

/* ---- entries ------------------------------------------------------------------------------- */

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
	e->rec.pid = pid;
	e->rec.comm = strdup("");
	e->rec.exe = strdup("");
	if (!e->rec.comm || !e->rec.exe || !tsearch(e, &ps->procs, cmp_proc)) {
		free_entry(e);
		return NULL;
	}
	ps->stats.entries++;
	ps->stats.held++;
	return e;
}

static int list_push(struct entry_list *l, struct proc_entry *e)
{
	int err = rec_grow(&l->v, l->n, &l->cap, sizeof(*l->v), 64);

	if (!err)
		l->v[l->n++] = e;
	return err;
}

static int mark_pending(struct rec_procs *ps, struct proc_entry *e)
{
	int err;

	if (e->pending)
		return 0;
	err = list_push(&ps->pending, e);
	e->pending = !err;
	return err;
}

static int set_str(char **dst, const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* ---- a process's mappings ------------------------------------------------------------------ */

static int cmp_pmap(const void *a, const void *b)
{
	const struct pmap *x = a, *y = b;

	return x->m.start < y->m.start ? -1 : x->m.start > y->m.start;
}

/* Put p at its place by start in e's mappings, none of which it overlaps any more. */
static int insert_pmap(struct proc_entry *e, const struct pmap *p)
{
	struct pmap *v = realloc(e->maps, (e->nmaps + 1) * sizeof(*v));
	uint32_t i;

	if (!v)
		return -ENOMEM;
	e->maps = v;
	for (i = e->nmaps; i && v[i - 1].m.start > p->m.start; i--)
		v[i] = v[i - 1];
	v[i] = *p;
	e->nmaps++;
	return 0;
}

/*
 * Add p (its path moved in) to e's mappings. As mmap(MAP_FIXED), it replaces whatever it
 * overlaps: the parts of older mappings outside it stay, and one that holds it whole is split.
 */
static int put_pmap(struct proc_entry *e, struct pmap *p)
{
	struct pmap above = { .m.path = NULL };
	uint32_t kept = 0;
	int err = 0;

	for (uint32_t i = 0; i < e->nmaps; i++) {
		struct pmap *old = &e->maps[i];
		uint64_t lo = old->m.start, hi = old->m.end;

		if (hi <= p->m.start || lo >= p->m.end) {
			e->maps[kept++] = *old;
			continue;
		}
		if (lo < p->m.start && hi > p->m.end) {
			above = *old;
			above.m.start = p->m.end;
			above.m.pgoff += p->m.end - lo;
			above.m.path = strdup(old->m.path);
			err = above.m.path ? 0 : -ENOMEM;
		}
		if (lo < p->m.start) {
			old->m.end = p->m.start;
		} else if (hi > p->m.end) {
			old->m.pgoff += p->m.end - lo;
			old->m.start = p->m.end;
		} else {
			free(old->m.path);	/* covered whole */
			continue;
		}
		e->maps[kept++] = *old;
	}
	e->nmaps = kept;
	if (insert_pmap(e, p)) {
		free(p->m.path);
		err = -ENOMEM;
	}
	if (above.m.path && insert_pmap(e, &above)) {
		free(above.m.path);
		err = -ENOMEM;
	}
	return err;
}

/*
 * Take e's mappings made before `before` off it: moved into `into` (room for all of them), or
 * freed when into is NULL. Returns how many were taken.
 */
static uint32_t take_maps_before(struct proc_entry *e, uint64_t before, struct pmap *into)
{
	uint32_t kept = 0, n = 0;

	for (uint32_t i = 0; i < e->nmaps; i++) {
		if (e->maps[i].added_ns >= before)
			e->maps[kept++] = e->maps[i];
		else if (into)
			into[n++] = e->maps[i];
		else
			free(e->maps[i].m.path);
	}
	e->nmaps = kept;
	return n;
}

/* Room for one more old image of e, its record copied from e's; NULL without memory. */
static struct old_image *new_old_image(struct rec_procs *ps, struct proc_entry *e)
{
	struct old_image *o, *v = realloc(e->old, (e->nold + 1) * sizeof(*v));

	if (!v)
		return NULL;
	e->old = v;
	o = &v[e->nold];
	memset(o, 0, sizeof(*o));
	o->maps = calloc(e->nmaps ? e->nmaps : 1, sizeof(*o->maps));
	o->rec = e->rec;
	o->rec.comm = strdup(e->rec.comm);
	o->rec.exe = strdup(e->rec.exe);
	if (!o->maps || !o->rec.comm || !o->rec.exe || (!e->nold && list_push(&ps->aged, e))) {
		free_old(o);
		return NULL;
	}
	return o;
}

/*
 * An exec or a new process at e's pid ended e's image: keep the mappings made before `before`
 * as an old image (moved, not copied), for rows of it drained after: the rows stamped before
 * `until`. Without memory they are dropped: such rows are then named with the new image, as
 * before there were old images.
 */
static void end_image(struct rec_procs *ps, struct proc_entry *e, uint64_t before, uint64_t until)
{
	struct old_image *o = NULL;
	uint32_t n;

	if (e->nmaps || (e->rec.flags & CAP_PROC_F_NO_MAPS))
		o = new_old_image(ps, e);
	n = take_maps_before(e, before, o ? o->maps : NULL);
	if (!o)
		return;
	o->nmaps = n;
	o->until_ns = until;
	o->epoch = ps->epoch;
	o->part = -1;
	e->nold++;
	e->images++;
}

/* Open the objects of maps not looked up yet (held open until written). */
static void look_up_maps(struct rec_procs *ps, struct proc_entry *e, struct pmap *maps, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct pmap *p = &maps[i];

		if (p->looked_up)
			continue;
		p->obj = rec_objects__get(ps->objects, e->pid, &p->m, e->other_ns);
		p->looked_up = true;
	}
}

/* Open the objects of e's mappings not looked up yet (held open until written). */
static void look_up_objects(struct rec_procs *ps, struct proc_entry *e)
{
	if (!e->ns_known) {
		char ns[64];

		/* not read from /proc: ask once; gone, the host path counts only if dev/inode match */
		read_mnt_ns(e->pid, ns, sizeof(ns));
		e->other_ns = !*ns || (*ps->mnt_ns && strcmp(ns, ps->mnt_ns));
		e->ns_known = true;
	}
	look_up_maps(ps, e, e->maps, e->nmaps);
}

/* ---- the BPF walker's view ----------------------------------------------------------------- */

/* What publishes and reads pass when no walk missed an address. */
static const struct rec_miss no_miss;

/* rd's mappings and tables: n of pm (free them with uread_free()). 0 or -ENOMEM. */
static int uread_of(struct rec_procs *ps, const struct pmap *pm, uint32_t n,
		    struct rec_uread *rd)
{
	struct rec_utable **tables = calloc(n ? n : 1, sizeof(*tables));
	struct cap_mapping *maps = calloc(n ? n : 1, sizeof(*maps));

	rd->maps = maps;
	rd->tables = tables;
	rd->n = n;
	if (!tables || !maps)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		maps[i] = pm[i].m;
		tables[i] = rec_object__utable(ps->objects, pm[i].obj);
	}
	return 0;
}

static void uread_free(struct rec_uread *rd)
{
	free((void *)rd->tables);
	free((void *)rd->maps);
}

/*
 * Give the walker n mappings with their objects' unwind tables: rd says the rest. old: as the
 * image before the current one (rec_unwind__old_image), else as the current one.
 */
static int give_walker(struct rec_procs *ps, uint32_t pid, const struct pmap *pm, uint32_t n,
		       struct rec_uread rd, bool old)
{
	int err = uread_of(ps, pm, n, &rd);

	if (!err)
		err = old ? rec_unwind__old_image(ps->unwind, pid, &rd)
			  : rec_unwind__proc(ps->unwind, pid, &rd);
	uread_free(&rd);
	return err;
}

/* e is given to the walker at the next rec_procs__publish() (a batch's end: rec_procs__release). */
static int mark_dirty(struct rec_procs *ps, struct proc_entry *e)
{
	int err = 0;

	if (!e->dirty) {
		err = list_push(&ps->dirty, e);
		e->dirty = !err;
	}
	return err;
}

/*
 * Give the walker e's mappings; known_ns: see rec_uread. A process whose image ended before the
 * walker first had it has deferred events of that image to walk: a forked child that exec'd
 * before stkrec read it ran in its fork image, a copy of its parent's mappings (the kernel's fork
 * record). Its newest old image goes first (rec_unwind__old_image). In a profile of gcc compile
 * loops the bash, sh, make and gcc children sampled between fork and exec were most of the
 * stacks cut at an address in no known mapping: their leaf, in the parent's libc.
 */
static int publish_unwind(struct rec_procs *ps, struct proc_entry *e, uint64_t known_ns,
			  const struct rec_miss *miss)
{
	struct rec_uread rd = { .read_ns = known_ns, .image_ns = e->image_ns, .miss = *miss };
	struct old_image *o = e->nold ? &e->old[e->nold - 1] : NULL;
	int err = 0;

	/* a walk's miss waits for its answer; others wait for the batch's end (rec_procs__hold) */
	if (ps->unwind && ps->held && miss == &no_miss)
		return mark_dirty(ps, e);
	e->dirty = false;
	if (!ps->unwind)
		return 0;
	/* rec_unwind__read_since(, 0): has the walker an image of e? */
	if (o && !rec_unwind__read_since(ps->unwind, e->pid, 0)) {
		look_up_maps(ps, e, o->maps, o->nmaps);	/* a parent without events has none */
		err = give_walker(ps, e->pid, o->maps, o->nmaps,
				  (struct rec_uread){ .read_ns = known_ns }, true);
	}
	if (!err)
		err = give_walker(ps, e->pid, e->maps, e->nmaps, rd, false);
	return err;
}

/* e changed: write it again, and give the walker its mappings at the next publish. */
static int touch(struct rec_procs *ps, struct proc_entry *e)
{
	int err;

	if (!e->wanted)
		return 0;
	err = mark_pending(ps, e);
	return err ? err : mark_dirty(ps, e);
}

void rec_procs__publish(struct rec_procs *ps, uint64_t known_ns)
{
	ps->known_ns = known_ns;
	if (ps->held)
		return;	/* rec_procs__release() will */
	for (uint32_t i = 0; i < ps->dirty.n; i++) {
		struct proc_entry *e = ps->dirty.v[i];

		if (!e->dirty)
			continue;	/* published since, by a /proc read */
		look_up_objects(ps, e);
		/* a /proc read held back by rec_procs__hold() knows its mappings up to its time */
		publish_unwind(ps, e, known_ns > e->snapshot_ns ? known_ns : e->snapshot_ns,
			       &no_miss);
	}
	ps->dirty.n = 0;
}

void rec_procs__hold(struct rec_procs *ps)
{
	ps->held = true;
}

void rec_procs__release(struct rec_procs *ps)
{
	ps->held = false;
	rec_procs__publish(ps, ps->known_ns);
}

/* e has events: its objects are opened and its record written from now on. */
static int want(struct rec_procs *ps, struct proc_entry *e)
{
	if (e->wanted)
		return 0;
	e->wanted = true;
	look_up_objects(ps, e);
	publish_unwind(ps, e, ps->known_ns, &no_miss);
	return mark_pending(ps, e);
}

/* ---- reading a process from /proc ---------------------------------------------------------- */

static int read_stat(struct rec_procs *ps, uint32_t pid, char *comm, size_t csz, uint64_t *start,
		     char *state)
{
	char path[64], line[1024];
	uint64_t ticks;
	ssize_t n;
	int fd, err;

	/*
	 * One read() of the whole file, not a line: the comm between the parentheses is the
	 * process's to choose and may hold a newline (prctl(PR_SET_NAME)), which cut an fgets()
	 * line short and lost the process's every user stack.
	 */
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, line, sizeof(line) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	line[n] = 0;
	err = rec_stat_line(line, comm, csz, &ticks);
	if (!err)
		*state = strrchr(line, ')')[1] ? strrchr(line, ')')[2] : 0;
	if (!err)
		*start = ticks * (1000000000ull / ps->clk_tck);
	return err;
}

uint32_t rec_tgid_of(uint32_t tid)
{
	char path[64], line[256];
	unsigned int tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && sscanf(line, "Tgid: %u", &tgid) != 1)
		;
	fclose(f);
	return tgid;
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

/* What reading /proc/PID yields. */
struct proc_read {
	struct cap_process p;	/* without maps */
	struct pmap *maps;
	uint32_t nmaps, cap;
	bool other_ns;
	uint32_t uid;
	uint64_t read_ns;	/* when /proc/PID/maps was opened */
};

static void clear_read(struct proc_read *r)
{
	free(r->p.comm);
	free(r->p.exe);
	free_maps(r->maps, r->nmaps);
	memset(r, 0, sizeof(*r));
}

static int read_maps(struct rec_procs *ps, uint32_t pid, struct proc_read *r)
{
	char path[64], line[PATH_MAX + 256], file[PATH_MAX];
	bool gate = false, high = false;	/* the vsyscall page's line; a mapping above 4 GiB */
	struct pmap p;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		gate |= !strncmp(line, GATE_LINE, sizeof(GATE_LINE) - 1);
		high |= strcspn(line, "-") > 8;
		if (rec_maps_line(line, &p.m, file, sizeof(file)) <= 0)
			continue;
		p.m.path = file;
		/* Opens the file now and holds it: the process may exit, the file go away. */
		p.obj = rec_objects__get(ps->objects, pid, &p.m, r->other_ns);
		p.looked_up = true;
		p.added_ns = r->read_ns;
		p.m.path = strdup(file);
		err = p.m.path ? rec_grow(&r->maps, r->nmaps, &r->cap, sizeof(p), 16) : -ENOMEM;
		if (!err)
			r->maps[r->nmaps++] = p;
		else
			free(p.m.path);
	}
	fclose(f);
	/*
	 * Cut short: the kernel lists maps a page per read(), and one that finds the process's
	 * memory gone (it exited or exec'd since the last) ends the list early, as if whole. gcc's
	 * `as` was recorded with 2 of its mappings, its frames in ld.so "outside any mapping". A
	 * 64-bit process's list (one with a mapping above 4 GiB) ends with the vsyscall page
	 * wherever stkrec's own does: without it, the read is of a process gone meanwhile.
	 */
	if (!err && ps->gate_last && high && !gate)
		err = -ESRCH;
	return err;
}

/*
 * The user the process opens files as (its fsuid, the last field of "Uid:" in /proc/PID/status),
 * which files it may hand stkrec are checked against (perfmap.c). Not the owner of /proc/PID:
 * a process that makes itself non-dumpable turns that into root. ~0u when unknown.
 */
static uint32_t proc_fsuid(uint32_t pid)
{
	unsigned int real, eff, saved, fs;
	uint32_t uid = ~0u;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return uid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &real, &eff, &saved, &fs) == 4) {
			uid = fs;
			break;
		}
	fclose(f);
	return uid;
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
	r->uid = proc_fsuid(pid);
	read_mnt_ns(pid, ns, sizeof(ns));
	r->other_ns = *ns && *ps->mnt_ns && strcmp(ns, ps->mnt_ns);
	r->read_ns = rec_now_ns();
	err = read_maps(ps, pid, r);
	/*
	 * No executable mapping at all: the process is past exit_mm() but not yet a zombie (or is
	 * a kernel thread, which has no user frames to name). Say it is gone, so its record says
	 * NO_MAPS instead of sending every user frame to "address outside any mapping".
	 */
	if (!err && !r->nmaps)
		err = -ESRCH;
	return err;
}

/* A read of e's current image: the same process (start time) running the same program. */
static bool same_image(const struct proc_entry *e, const struct proc_read *r)
{
	return e->nmaps && e->rec.start_time == r->p.start_time && e->rec.comm && e->rec.exe &&
	       !strcmp(e->rec.comm, r->p.comm) && !strcmp(e->rec.exe, r->p.exe);
}

static bool overlaps_any(const struct pmap *maps, uint32_t n, const struct cap_mapping *m)
{
	for (uint32_t i = 0; i < n; i++)
		if (maps[i].m.start < m->end && m->start < maps[i].m.end)
			return true;
	return false;
}

/*
 * A read lists what is mapped now, but the interval's rows name what was mapped when their
 * events came: a JIT frees its code before it exits (node), and the -- COMMAND child is read
 * again at its exit stop. The mappings of e's image that r no longer lists, and where it lists
 * nothing, go into r, marked gone, until the interval after the next is written (every row of
 * theirs drained and named by then). Without memory they are dropped, as before.
 */
static void keep_gone(struct rec_procs *ps, struct proc_entry *e, struct proc_read *r)
{
	for (uint32_t i = 0; i < e->nmaps; i++) {
		struct pmap p = e->maps[i];

		if ((p.gone_epoch && p.gone_epoch + 1 < ps->epoch) ||
		    overlaps_any(r->maps, r->nmaps, &p.m) ||
		    rec_grow(&r->maps, r->nmaps, &r->cap, sizeof(p), 16))
			continue;
		p.gone_epoch = p.gone_epoch ? p.gone_epoch : ps->epoch;
		p.m.path = strdup(p.m.path);
		if (!p.m.path)
			continue;
		r->maps[r->nmaps++] = p;
	}
	qsort(r->maps, r->nmaps, sizeof(*r->maps), cmp_pmap);
}

/* e becomes what was read: the whole state of the process at r->read_ns (r is emptied). */
static void adopt_read(struct proc_entry *e, struct proc_read *r)
{
	clear_maps(e);
	free(e->rec.comm);
	free(e->rec.exe);
	e->rec = r->p;
	e->maps = r->maps;
	e->nmaps = r->nmaps;
	e->other_ns = r->other_ns;
	e->ns_known = true;
	e->uid = r->uid;
	e->snapshot_ns = r->read_ns;
	e->from_proc = e->complete = true;
	e->exit_epoch = 0;
	memset(r, 0, sizeof(*r));
}

/* e becomes what was read, and has events: written, and given to the walker. */
static int take_read(struct rec_procs *ps, struct proc_entry *e, struct proc_read *r,
		     const struct rec_miss *miss)
{
	if (same_image(e, r))
		keep_gone(ps, e, r);
	adopt_read(e, r);
	e->wanted = true;
	publish_unwind(ps, e, e->snapshot_ns, miss);
	return mark_pending(ps, e);
}

/*
 * The entry of a parent stkrec did not know when it forked: one older than the recording that
 * had no event yet (a shell running a loop). Read now, while it lives, so that its child starts
 * with its mappings (rec_procs__forked); not wanted until it has events itself. NULL when gone.
 */
static struct proc_entry *read_parent(struct rec_procs *ps, uint32_t ppid)
{
	struct proc_read r = { 0 };
	struct proc_entry *e = NULL;

	if (ppid > 2 && !read_process(ps, ppid, &r))	/* not init's or kthreadd's children */
		e = get_entry(ps, ppid);
	if (e)
		adopt_read(e, &r);
	clear_read(&r);
	return e;
}

/*
 * Every mapping e has made is known: it was started during the recording (forked or exec'd), or
 * read from /proc since the kernel's records are followed, and the records since say the rest;
 * and it is alive (a pid whose exit was seen may name a new process whose fork record is still
 * in a ring). Reading /proc/PID/maps, the costly part of a read, for each process a busy host
 * starts would only repeat the records, and a read races the process: one of a process that
 * execs some 500 times a second, when BPF first saw it or at each exec, was of an image or more
 * later than the event that asked, and replaced the images in between (their records, older
 * than the read, were dropped), which the rows of those images were then named with. A binary
 * deleted since the read is found deleted when its object is written (rec_object__deleted()).
 */
static bool followed(const struct rec_procs *ps, const struct proc_entry *e)
{
	return ps->following && e->complete && !e->exit_epoch &&
	       !(e->rec.flags & CAP_PROC_F_NO_MAPS);
}

/* A followed process (above) has events: read what only /proc says, its start time and owner. */
static int want_followed(struct rec_procs *ps, struct proc_entry *e)
{
	char comm[CAP_COMM_LEN], state;
	uint64_t start;

	if (e->wanted)
		return 0;
	if (!e->rec.start_time && !read_stat(ps, e->pid, comm, sizeof(comm), &start, &state)) {
		e->rec.start_time = start;
		e->uid = proc_fsuid(e->pid);
	}
	/* not its parent's if it called unshare(CLONE_NEWNS) after the fork: look_up_objects asks */
	e->ns_known = false;
	return want(ps, e);
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
	if (e && followed(ps, e)) {
		err = want_followed(ps, e);
		/* a walk's miss is answered by the records too: the mappings published again */
		if (!err && why == REC_READ_MISS)
			err = publish_unwind(ps, e, ps->known_ns, miss);
		return err;
	}
	if (e && why == REC_READ_IF_NEW && e->wanted && e->from_proc &&
	    !(e->rec.flags & CAP_PROC_F_NO_MAPS)) {
		/* Known: read again only when the pid now belongs to another process. */
		if (read_stat(ps, pid, comm, sizeof(comm), &start, &state) || start == e->rec.start_time)
			return 0;
	}
	err = read_process(ps, pid, &r);
	if (!err) {
		e = e ? e : get_entry(ps, pid);
		err = e ? take_read(ps, e, &r, miss) : -ENOMEM;
	} else if (e && e->complete) {
		/* gone, or past exit_mm(): what the kernel's records told us is all there is */
		err = want(ps, e);
	}
	clear_read(&r);
	return err;
}

int rec_procs__note(struct rec_procs *ps, uint32_t pid, enum rec_read_why why)
{
	return note(ps, pid, why, &no_miss);
}

int rec_procs__recheck(struct rec_procs *ps, uint32_t pid, const struct rec_miss *miss)
{
	return note(ps, pid, REC_READ_MISS, miss);
}

bool rec_procs__ensure(struct rec_procs *ps, uint32_t pid, const char *comm)
{
	struct proc_entry *e = find_entry(ps, pid);
	char *named;

	if (!pid)
		return true;
	if (e && e->wanted)
		return !(e->rec.flags & CAP_PROC_F_NO_MAPS);
	if (!rec_procs__note(ps, pid, REC_READ_IF_NEW) && (e = find_entry(ps, pid)) && e->wanted)
		return true;
	/* Gone before we could read it: a record that says so, with the comm BPF saw. */
	e = get_entry(ps, pid);
	if (!e || !(named = strndup(comm, CAP_COMM_LEN - 1)))
		return false;
	clear_maps(e);
	free(e->rec.comm);
	e->rec.comm = named;
	e->rec.flags = CAP_PROC_F_NO_MAPS;
	e->wanted = true;
	e->complete = false;
	if (!set_str(&e->rec.exe, ""))
		mark_pending(ps, e);
	return false;
}

/* ---- what the kernel's records say (mmaps.c) ----------------------------------------------- */

void rec_procs__mapped(struct rec_procs *ps, uint32_t pid, const struct cap_mapping *m,
		       uint64_t ns)
{
	struct proc_entry *e = get_entry(ps, pid);
	struct pmap p = { .m = *m, .added_ns = ns };

	/* in the last /proc read already, or of the image an exec has replaced since */
	if (!e || ns < e->snapshot_ns || ns < e->exec_ns)
		return;
	p.m.path = strdup(m->path);
	if (!p.m.path || put_pmap(e, &p))
		return;
	/* the first file an exec maps is the program (load_elf_binary maps it first) */
	if (e->exec_ns && !*e->rec.exe && m->kind == CAP_MAP_FILE)
		set_str(&e->rec.exe, m->path);
	if (e->wanted)
		look_up_objects(ps, e);	/* now, while map_files still leads to the file */
	touch(ps, e);
}

void rec_procs__exec_seen(struct rec_procs *ps, uint32_t pid, uint64_t ns)
{
	struct proc_entry *e = find_entry(ps, pid);

	if (!e)
		return;
	/*
	 * The kernel's exec record (rec_procs__exec) comes through another ring and may be
	 * applied before or after this: it ended the image already when it came since the
	 * previous exec BPF told of.
	 */
	if (e->image_ns <= e->bpf_exec_ns && ns > e->image_ns) {
		/*
		 * Every mapping so far is the old image's, unless a /proc read came after the exec
		 * (a deferred walk's, before this was polled): that read is of the new image. Taken
		 * off as the old image's, a short -- COMMAND child was written without mappings,
		 * every user frame "[unknown]" (lazy.sh: 7 of 100 runs beside three busy loops).
		 */
		if (ns > e->snapshot_ns) {
			end_image(ps, e, UINT64_MAX, ns);
			set_str(&e->rec.exe, "");	/* the next file mapped, or read, says */
		}
		e->image_ns = ns;
	}
	e->bpf_exec_ns = ns;
}

void rec_procs__exec(struct rec_procs *ps, uint32_t pid, const char *comm, uint64_t ns)
{
	struct proc_entry *e = get_entry(ps, pid);

	if (!e || ns < e->snapshot_ns)
		return;		/* the last /proc read is of the new image already */
	if (ns > e->image_ns)	/* else BPF told of this exec first: the image ended then */
		end_image(ps, e, ns, ns);
	else
		take_maps_before(e, ns, NULL);	/* of the image ended then: forgotten */
	e->image_ns = e->image_ns > ns ? e->image_ns : ns;
	e->exec_ns = ns;
	e->complete = true;
	e->ns_known = false;	/* unshare(CLONE_NEWNS), then exec: how containers start */
	e->rec.flags &= ~CAP_PROC_F_NO_MAPS;
	if (set_str(&e->rec.comm, comm) || set_str(&e->rec.exe, ""))
		return;
	touch(ps, e);
}

void rec_procs__forked(struct rec_procs *ps, uint32_t pid, uint32_t ppid, uint64_t ns)
{
	struct proc_entry *parent = find_entry(ps, ppid), *e = get_entry(ps, pid);

	/* records of the child read before its parent's fork record (another CPU's ring) */
	if (!e || e->exec_ns > ns || e->snapshot_ns > ns)
		return;
	/* a pid used again: nothing of the process that had it carries over but its old image */
	if (ns > e->image_ns)
		end_image(ps, e, UINT64_MAX, ns);
	clear_maps(e);
	e->image_ns = ns > e->image_ns ? ns : e->image_ns;
	e->complete = e->from_proc = e->ns_known = false;
	e->exit_epoch = 0;
	e->snapshot_ns = ns;
	e->exec_ns = 0;
	e->rec.start_time = 0;
	e->rec.flags = 0;
	if (!parent && ps->following)
		parent = read_parent(ps, ppid);
	if (!parent || !parent->complete || (parent->rec.flags & CAP_PROC_F_NO_MAPS))
		return;
	/* a child starts with its parent's mappings */
	for (uint32_t i = 0; i < parent->nmaps; i++) {
		struct pmap p = parent->maps[i];

		p.added_ns = ns;
		p.m.path = strdup(p.m.path);
		if (!p.m.path || insert_pmap(e, &p)) {	/* in order, overlapping nothing */
			free(p.m.path);
			return;
		}
	}
	e->complete = true;
	e->other_ns = parent->other_ns;
	e->ns_known = parent->ns_known;
	e->uid = parent->uid;
	if (set_str(&e->rec.comm, parent->rec.comm) || set_str(&e->rec.exe, parent->rec.exe))
		return;
	touch(ps, e);
}

void rec_procs__exited(struct rec_procs *ps, uint32_t pid)
{
	struct proc_entry *e = find_entry(ps, pid);

	if (!e || e->exit_epoch)
		return;
	if (rec_grow(&ps->exited, ps->nexited, &ps->exited_cap, sizeof(*ps->exited), 256))
		return;	/* kept until the end: memory, not correctness */
	ps->exited[ps->nexited++] = pid;
	e->exit_epoch = ps->epoch;
}

void rec_procs__follow(struct rec_procs *ps, bool whole)
{
	ps->following = whole;
}

/*
 * Old images that ended before the interval just written began: their events were drained by
 * now (an event comes before the exec that ends its image, so in the interval the exec was
 * seen in or the one before).
 */
static void forget_old_images(struct rec_procs *ps)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < ps->aged.n; i++) {
		struct proc_entry *e = ps->aged.v[i];
		uint32_t n = 0;

		for (uint32_t j = 0; j < e->nold; j++) {
			if (e->old[j].epoch < ps->epoch)
				free_old(&e->old[j]);
			else
				e->old[n++] = e->old[j];
		}
		e->nold = n;
		if (n)
			ps->aged.v[kept++] = e;
	}
	ps->aged.n = kept;
}

/*
 * Entries a /proc read published since they were listed are skipped by rec_procs__publish():
 * take them off the list, which must not point at an entry that retire frees.
 */
static void unlist_published(struct entry_list *l)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i]->dirty)
			l->v[kept++] = l->v[i];
	l->n = kept;
}

void rec_procs__retire(struct rec_procs *ps)
{
	uint32_t kept = 0;

	unlist_published(&ps->dirty);
	for (uint32_t i = 0; i < ps->nexited; i++) {
		struct proc_entry *e = find_entry(ps, ps->exited[i]);

		if (!e || !e->exit_epoch)
			continue;	/* the pid was used again since */
		/* seen before the last retire: every event it had is in the drain just done */
		if (e->exit_epoch >= ps->epoch || e->pending || e->dirty || e->nold) {
			ps->exited[kept++] = ps->exited[i];
			continue;
		}
		tdelete(e, &ps->procs, cmp_proc);
		rec_unwind__forget(ps->unwind, e->pid);
		free_entry(e);
		ps->stats.retired++;
		ps->stats.held--;
	}
	ps->nexited = kept;
	forget_old_images(ps);
	ps->epoch++;
}

void rec_procs__stats(const struct rec_procs *ps, struct rec_procs_stats *st)
{
	*st = ps->stats;
}

/* ---- records ------------------------------------------------------------------------------- */

/* The old image of e that names a row of time `when`, or NULL for the current one. */
static struct old_image *image_at(struct proc_entry *e, uint64_t when)
{
	for (uint32_t i = 0; i < e->nold; i++)
		if (when < e->old[i].until_ns)
			return &e->old[i];
	return NULL;
}

/* The mappings that name a row of e at `when`. */
static void maps_at(struct proc_entry *e, uint64_t when, struct pmap **maps, uint32_t *n)
{
	struct old_image *o = image_at(e, when);

	*maps = o ? o->maps : e->maps;
	*n = o ? o->nmaps : e->nmaps;
}

bool rec_procs__walk_old(struct rec_procs *ps, const struct stk_deferred *d,
			 const struct stk_pychain *chain, uint64_t *ips, uint32_t max, uint32_t *stop,
			 uint32_t *n)
{
	struct proc_entry *e = ps->unwind ? find_entry(ps, d->key.tgid) : NULL;
	struct old_image *o = e ? image_at(e, d->key.image_ns) : NULL;
	struct rec_uread rd = { 0 };

	if (!o)
		return false;
	look_up_maps(ps, e, o->maps, o->nmaps);
	if (uread_of(ps, o->maps, o->nmaps, &rd)) {
		uread_free(&rd);
		return false;
	}
	*n = rec_unwind__walk_read(ps->unwind, &rd, d, chain, ips, max, stop);
	uread_free(&rd);
	return true;
}

/* Rank the images e's rows use into parts 0, 1, ...: the highest part + 1. */
static uint32_t rank_images(struct proc_entry *e)
{
	uint32_t next = 0;

	for (uint32_t i = 0; i < e->nold; i++)
		if (e->old[i].part >= 0)
			e->old[i].part = next++;
	if (e->part >= 0)
		e->part = next++;
	return next;
}

/* The entry of a row whose process has old images, or NULL. */
static struct proc_entry *aged_entry(struct rec_procs *ps, const struct cap_row *row)
{
	struct proc_entry *e = row->pid ? find_entry(ps, row->pid) : NULL;

	return e && e->nold ? e : NULL;
}

/* The images e has now are the ones the interval's rows are named with (split_image()). */
static void freeze(struct proc_entry *e)
{
	e->split_images = e->images;
}

int rec_procs__split(struct rec_procs *ps, const struct cap_interval *iv, const uint64_t *when,
		     uint32_t *part)
{
	uint32_t nparts = 1;
	int err = 0;

	for (uint32_t i = 0; i < ps->pending.n; i++) {
		ps->pending.v[i]->due = true;
		freeze(ps->pending.v[i]);
	}
	ps->split.n = 0;
	/* which old images the rows use (part 0 marks "used" until ranked); none kept: no lookup */
	for (uint32_t i = 0; ps->aged.n && i < iv->nrows && !err; i++) {
		struct proc_entry *e = aged_entry(ps, &iv->rows[i]);
		struct old_image *o = e ? image_at(e, when[i]) : NULL;

		if (!o)
			continue;
		if (!e->split) {
			for (uint32_t j = 0; j < e->nold; j++)
				e->old[j].part = -1;
			e->part = -1;
			err = list_push(&ps->split, e);
			e->split = !err;
			freeze(e);
		}
		o->part = 0;
		look_up_maps(ps, e, o->maps, o->nmaps);
	}
	if (!ps->split.n) {	/* the common case: one part, without looking the rows up again */
		memset(part, 0, iv->nrows * sizeof(*part));
		return err ? err : 1;
	}
	/* and which of those processes' current images */
	for (uint32_t i = 0; i < iv->nrows; i++) {
		struct proc_entry *e = aged_entry(ps, &iv->rows[i]);

		if (e && e->split && !image_at(e, when[i]))
			e->part = 0;
	}
	for (uint32_t i = 0; i < ps->split.n; i++) {
		uint32_t n = rank_images(ps->split.v[i]);

		nparts = n > nparts ? n : nparts;
	}
	for (uint32_t i = 0; i < iv->nrows; i++) {
		struct proc_entry *e = aged_entry(ps, &iv->rows[i]);
		struct old_image *o = e && e->split ? image_at(e, when[i]) : NULL;

		part[i] = !e || !e->split ? 0 : o ? (uint32_t)o->part : (uint32_t)e->part;
	}
	return err ? err : (int)nparts;
}

/* Room for n records and nmaps mappings in ps->out and ps->out_maps. */
static int out_room(struct rec_procs *ps, uint32_t n, uint32_t nmaps)
{
	struct cap_process *v = realloc(ps->out, (n ? n : 1) * sizeof(*v));
	struct cap_mapping *m;

	if (v)
		ps->out = v;
	m = realloc(ps->out_maps, (nmaps ? nmaps : 1) * sizeof(*m));
	if (m)
		ps->out_maps = m;
	return v && m ? 0 : -ENOMEM;
}

/* One record into ps->out[*n], its mappings from ps->out_maps[*used]. */
static void out_put(struct rec_procs *ps, const struct cap_process *rec, const struct pmap *maps,
		    uint32_t nmaps, uint32_t *n, uint32_t *used)
{
	struct cap_process *p = &ps->out[(*n)++];

	*p = *rec;
	p->maps = ps->out_maps + *used;
	p->nmaps = nmaps;
	for (uint32_t j = 0; j < nmaps; j++) {
		struct cap_mapping *m = &ps->out_maps[(*used)++];

		*m = maps[j].m;
		if (rec_object__deleted(maps[j].obj))	/* unlinked after the last read */
			m->flags |= CAP_MAP_F_DELETED;
	}
}

/*
 * Is e's current image (at the split) written before part p? (Not at all while rows of it are
 * split off.) An entry that became pending since the split waits for the next interval.
 */
static bool current_in_part(const struct proc_entry *e, uint32_t p)
{
	if (e->split)
		return e->part == (int32_t)p;
	return p == 0 && e->pending && e->due;
}

/*
 * The image e's rows of the current image at the split ran in: still e's, or made old by an exec
 * the reader applied since (the newest old images are the ones made since).
 */
static void split_image(const struct proc_entry *e, const struct cap_process **rec,
			const struct pmap **maps, uint32_t *n)
{
	uint32_t since = e->images - e->split_images;
	const struct old_image *o = since && since <= e->nold ? &e->old[e->nold - since] : NULL;

	*rec = o ? &o->rec : &e->rec;
	*maps = o ? o->maps : e->maps;
	*n = o ? o->nmaps : e->nmaps;
}

/* out_put() of e's image at the split. */
static void out_put_split(struct rec_procs *ps, const struct proc_entry *e, uint32_t *n,
			  uint32_t *used)
{
	const struct cap_process *rec;
	const struct pmap *maps;
	uint32_t nmaps;

	split_image(e, &rec, &maps, &nmaps);
	out_put(ps, rec, maps, nmaps, n, used);
}

static uint32_t split_nmaps(const struct proc_entry *e)
{
	const struct cap_process *rec;
	const struct pmap *maps;
	uint32_t n;

	split_image(e, &rec, &maps, &n);
	return n;
}

void rec_procs__pending(struct rec_procs *ps, uint32_t p, struct cap_procs *out)
{
	uint32_t n = 0, nmaps = 0, used = 0;

	out->count = 0;
	out->procs = NULL;
	for (uint32_t i = 0; i < ps->pending.n; i++)
		nmaps += split_nmaps(ps->pending.v[i]);
	for (uint32_t i = 0; i < ps->split.n; i++) {
		const struct proc_entry *e = ps->split.v[i];

		nmaps += e->nmaps;
		for (uint32_t j = 0; j < e->nold; j++)
			nmaps += e->old[j].nmaps;
	}
	if (out_room(ps, ps->pending.n + ps->split.n * 2 + 1, nmaps))
		return;
	/* each split entry has at most one image per part */
	for (uint32_t i = 0; i < ps->split.n; i++) {
		const struct proc_entry *e = ps->split.v[i];

		for (uint32_t j = 0; j < e->nold; j++)
			if (e->old[j].part == (int32_t)p)
				out_put(ps, &e->old[j].rec, e->old[j].maps, e->old[j].nmaps, &n,
					&used);
		if (current_in_part(e, p))
			out_put_split(ps, e, &n, &used);
	}
	for (uint32_t i = 0; i < ps->pending.n; i++) {
		const struct proc_entry *e = ps->pending.v[i];

		if (!e->split && current_in_part(e, p))
			out_put_split(ps, e, &n, &used);
	}
	out->count = n;
	out->procs = ps->out;
}

void rec_procs__written(struct rec_procs *ps, uint32_t p)
{
	uint32_t kept = 0;

	if (p)
		return;		/* parts after the first hold images of split entries only */
	/*
	 * A split entry's current image may come in a later part: rec_procs__split_done(). One
	 * that became pending since the split, or whose image an exec ended since, is written
	 * (again, whole) with the next interval.
	 */
	for (uint32_t i = 0; i < ps->pending.n; i++) {
		struct proc_entry *e = ps->pending.v[i];

		if (e->split || !e->due || e->images != e->split_images)
			ps->pending.v[kept++] = e;
		else
			e->pending = false;
		e->due = e->split && e->due;
	}
	ps->pending.n = kept;
}

void rec_procs__split_done(struct rec_procs *ps)
{
	/*
	 * Written once more with the next interval, whole: the last record of the pid is then its
	 * current image (the rows of an old image may have come last), and a change the reader
	 * made between the parts is in it.
	 */
	for (uint32_t i = 0; i < ps->split.n; i++) {
		struct proc_entry *e = ps->split.v[i];

		e->split = e->due = false;
		if (e->wanted)
			mark_pending(ps, e);
	}
	ps->split.n = 0;
}

/* ---- a new capture file -------------------------------------------------------------------- */

static void pending_again(const void *node, VISIT which, void *ctx)
{
	struct proc_entry *e = *(struct proc_entry *const *)node;

	if ((which == postorder || which == leaf) && e->wanted)
		mark_pending(ctx, e);
}

void rec_procs__new_file(struct rec_procs *ps)
{
	twalk_r(ps->procs, pending_again, ps);
	rec_objects__new_file(ps->objects);
}

/* ---- objects hit by stacks ---------------------------------------------------------------- */

static struct rec_object *object_at(const struct pmap *maps, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < maps[mid].m.start)
			hi = mid;
		else if (addr >= maps[mid].m.end)
			lo = mid + 1;
		else
			return maps[mid].obj;
	}
	return NULL;
}

static int push_hit(struct rec_procs *ps, struct rec_object *obj)
{
	if (!obj || !rec_object__queue(ps->objects, obj))
		return 0;
	if (rec_grow(&ps->hits, ps->nhits, &ps->hits_cap, sizeof(*ps->hits), 64))
		return -ENOMEM;
	ps->hits[ps->nhits++] = obj;
	return 0;
}

int rec_procs__hit_objects(struct rec_procs *ps, const struct cap_interval *iv,
			   const uint64_t *when, struct rec_object ***objs, uint32_t *n)
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
		struct proc_entry *e;
		const struct cap_stack *s;
		struct pmap *maps;
		uint32_t nmaps;

		if (!row->ustack || row->ustack > iv->nustacks ||
		    walked[row->ustack - 1] == row->pid + 1 || !(e = find_entry(ps, row->pid)))
			continue;
		/* rows of an old image: each walks its own (walked[] is for the common case) */
		maps_at(e, when[i], &maps, &nmaps);
		if (!e->nold)
			walked[row->ustack - 1] = row->pid + 1;
		s = &iv->ustacks[row->ustack - 1];
		for (uint32_t j = 0; j < s->nips && !err; j++)
			err = push_hit(ps, object_at(maps, nmaps, s->ips[j]));
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

	/* read from /proc, or followed with what only /proc says asked (want_followed()) */
	if (!e || !e->rec.start_time || !e->ns_known || (e->rec.flags & CAP_PROC_F_NO_MAPS))
		return -ENOENT;
	info->start_time = e->rec.start_time;
	info->other_ns = e->other_ns;
	info->uid = e->uid;
	return 0;
}
