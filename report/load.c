// SPDX-License-Identifier: MIT
/*
 * load.c: walk a capture into struct rep_capture. Every record that a row needs precedes the row
 * (format.md), so one pass suffices: the process table (latest record of a pid wins) and the
 * kallsyms snapshot in force are resolved for each row as its interval is read. Damage ends the
 * walk but keeps everything read before it: a damaged capture still yields a report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* pid -> latest process record, valid while the walk is at the current chunk */
struct proc_table {
	struct rep_htab index;
	uint32_t *pids;
	const struct cap_process **procs;
	uint32_t n, cap;
};

struct pid_key {
	const struct proc_table *t;
	uint32_t pid;
};

static bool pid_eq(const void *ctx, uint32_t val)
{
	const struct pid_key *k = ctx;

	return k->t->pids[val] == k->pid;
}

static const struct cap_process *proc_table__get(const struct proc_table *t, uint32_t pid)
{
	struct pid_key key = { t, pid };
	uint32_t id;

	if (!rep_htab__find(&t->index, rep_hash_u64(0, pid), pid_eq, &key, &id))
		return NULL;
	return t->procs[id];
}

static int proc_table__set(struct proc_table *t, const struct cap_process *p)
{
	struct pid_key key = { t, p->pid };
	uint64_t h = rep_hash_u64(0, p->pid);
	uint32_t id;

	if (rep_htab__find(&t->index, h, pid_eq, &key, &id)) {
		t->procs[id] = p;
		return 0;
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		uint32_t *pids = realloc(t->pids, cap * sizeof(*pids));
		const struct cap_process **procs;

		if (!pids)
			return -ENOMEM;
		t->pids = pids;
		procs = realloc(t->procs, cap * sizeof(*procs));
		if (!procs)
			return -ENOMEM;
		t->procs = procs;
		t->cap = cap;
	}
	if (rep_htab__insert(&t->index, h, t->n))
		return -ENOMEM;
	t->pids[t->n] = p->pid;
	t->procs[t->n] = p;
	t->n++;
	return 0;
}

static void proc_table__clear(struct proc_table *t)
{
	rep_htab__clear(&t->index);
	free(t->pids);
	free(t->procs);
}

/* Keep rec until rep_capture__free(). */
static int keep(struct rep_capture *c, struct cap_record *rec)
{
	if (c->nrecs == c->recs_cap) {
		uint32_t cap = c->recs_cap ? c->recs_cap * 2 : 32;
		struct cap_record **recs = realloc(c->recs, cap * sizeof(*recs));

		if (!recs)
			return -ENOMEM;
		c->recs = recs;
		c->recs_cap = cap;
	}
	c->recs[c->nrecs++] = rec;
	return 0;
}

static int add_ksyms(struct rep_capture *c, struct cap_ksyms *ks)
{
	struct cap_ksyms **v = realloc(c->ksyms, (c->nksyms + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	c->ksyms = v;
	c->ksyms[c->nksyms++] = ks;
	return 0;
}

/* Append ptr to a pointer array growing one by one (objects and perf maps are few). */
static int push_ptr(const void ***v, uint32_t *n, const void *ptr)
{
	const void **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = ptr;
	*v = nv;
	return 0;
}

static int add_losses(struct rep_capture *c, const struct cap_losses *l)
{
	uint32_t i;

	for (i = 0; i < CAP_LOSS__COUNT; i++)
		c->losses[i] += l->counts[i];
	if (l->ncpus > c->ncpus) {
		uint64_t *v = realloc(c->cpu_dropped, l->ncpus * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->ncpus, 0, (l->ncpus - c->ncpus) * sizeof(*v));
		c->cpu_dropped = v;
		c->ncpus = l->ncpus;
	}
	for (i = 0; i < l->ncpus; i++)
		c->cpu_dropped[i] += l->cpu_dropped[i];
	return 0;
}

static int add_interval(struct rep_capture *c, struct cap_interval *iv,
			const struct proc_table *procs, bool events)
{
	struct rep_interval *ri;
	uint32_t i;

	if (!(c->nintervals & (c->nintervals - 1)) || !c->nintervals) {
		/* grow at powers of two */
		uint32_t cap = c->nintervals ? c->nintervals * 2 : 8;
		struct rep_interval *v = realloc(c->intervals, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->intervals = v;
	}
	ri = &c->intervals[c->nintervals];
	ri->iv = iv;
	ri->events = events;
	c->has_events |= events;
	ri->ksyms = c->nksyms ? c->nksyms - 1 : UINT32_MAX;
	ri->procs = calloc(iv->nrows ? iv->nrows : 1, sizeof(*ri->procs));
	if (!ri->procs)
		return -ENOMEM;
	for (i = 0; i < iv->nrows; i++) {
		ri->procs[i] = proc_table__get(procs, iv->rows[i].pid);
		c->events += iv->rows[i].count;
	}
	c->nintervals++;
	return 0;
}

/* Take one decoded record: returns 1 if kept, 0 if it can be freed, or -ENOMEM. */
static int take(struct rep_capture *c, struct cap_record *rec, struct proc_table *procs)
{
	uint32_t i;
	int err;

	switch (rec->type) {
	case CAP_CHUNK_META:
		if (c->meta)
			return 0;	/* only the first one describes the capture */
		c->meta = &rec->meta;
		return 1;
	case CAP_CHUNK_KSYMS:
		err = add_ksyms(c, &rec->ksyms);
		return err ? err : 1;
	case CAP_CHUNK_PROCS:
		for (i = 0; i < rec->procs.count; i++) {
			err = proc_table__set(procs, &rec->procs.procs[i]);
			if (err)
				return err;
		}
		return 1;
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS:
		err = add_interval(c, &rec->interval, procs, rec->type == CAP_CHUNK_EVENTS);
		return err ? err : 1;
	case CAP_CHUNK_LOSSES:
		err = add_losses(c, &rec->losses);
		return err ? err : 0;
	case CAP_CHUNK_OBJECTS:
		for (i = 0; i < rec->objects.count; i++) {
			err = push_ptr((const void ***)&c->objects, &c->nobjects,
				       &rec->objects.objs[i]);
			if (err)
				return err;
		}
		return 1;
	case CAP_CHUNK_PERFMAP:
		err = push_ptr((const void ***)&c->perfmaps, &c->nperfmaps, &rec->perfmap);
		return err ? err : 1;
	case CAP_CHUNK_END:
		c->has_end = true;
		c->end = rec->end;
		return 0;
	default:
		return 0;
	}
}

static void stop(struct rep_capture *c, struct cap_reader *r, int err)
{
	c->how = err == -ENODATA ? REP_END_TRUNCATED : REP_END_ERROR;
	c->err = err;
	c->err_chunk = cap_reader__chunk_index(r);
	c->err_offset = cap_reader__offset(r);
}

static struct rep_capture *load(struct cap_reader *r)
{
	struct proc_table procs = { 0 };
	struct rep_capture *c;
	struct cap_chunk chunk;
	int err = 0, n;

	c = calloc(1, sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	cap_reader__version(r, &c->major, &c->minor);
	while ((n = cap_reader__next(r, &chunk)) > 0) {
		struct cap_record *rec = NULL;
		int kept;

		err = cap_record__decode(&chunk, &rec);
		if (err == -ENOMEM)
			goto out;
		if (err) {
			c->how = REP_END_ERROR;
			c->err = err;
			c->err_chunk = chunk.index;
			c->err_offset = chunk.offset;
			err = 0;
			goto out;
		}
		/* room first: once taken, the record is referenced and must not be freed */
		err = keep(c, rec);
		if (err) {
			cap_record__free(rec);
			goto out;
		}
		kept = take(c, rec, &procs);
		if (kept <= 0) {
			c->nrecs--;
			cap_record__free(rec);
		}
		if (kept < 0) {
			err = kept;
			goto out;
		}
	}
	if (n < 0)
		stop(c, r, n);
	else
		c->how = c->has_end ? REP_END_CLEAN : REP_END_UNCLOSED;
out:
	proc_table__clear(&procs);
	cap_reader__close(r);
	if (err) {
		rep_capture__free(c);
		errno = -err;
		return NULL;
	}
	return c;
}

struct rep_capture *rep_capture__load(const char *path)
{
	struct cap_reader *r = cap_reader__open(path);

	return r ? load(r) : NULL;
}

struct rep_capture *rep_capture__load_mem(const void *buf, size_t len)
{
	struct cap_reader *r = cap_reader__open_mem(buf, len);

	return r ? load(r) : NULL;
}

void rep_capture__free(struct rep_capture *c)
{
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < c->nintervals; i++)
		free(c->intervals[i].procs);
	free(c->intervals);
	free(c->ksyms);
	free(c->cpu_dropped);
	free(c->objects);
	free(c->perfmaps);
	for (i = 0; i < c->nrecs; i++)
		cap_record__free(c->recs[i]);
	free(c->recs);
	free(c);
}

struct sym_user *rep_sym_user__new(const struct rep_capture *c, const struct rep_opts *o)
{
	struct sym_user_opts so = {
		.symfs = o->symfs,
		.debug_dirs = o->debug_dirs,
		.ndebug_dirs = o->ndebug_dirs,
		.open_files = !o->no_objects,
		.lines = o->lines,
		.inlines = !o->no_inline,
		.demangle = !o->no_demangle,
		.objects = c->objects,
		.nobjects = c->nobjects,
		.perfmaps = c->perfmaps,
		.nperfmaps = c->nperfmaps,
	};

	return sym_user__new(&so);
}

bool rep_capture_start_ns(const struct rep_capture *c, int64_t *ns)
{
	int64_t v;

	/* a temporary: rep_capture_meta_i64() writes what it parsed even when it fails */
	if (rep_capture_meta_i64(c, "start.mono_ns", &v)) {
		*ns = v;
		return true;
	}
	if (!c->nintervals)
		return false;
	*ns = c->intervals[0].iv->start_ns;
	return true;
}

bool rep_capture_end_ns(const struct rep_capture *c, uint64_t *ns)
{
	if (c->has_end)
		*ns = c->end.end_ns;
	else if (c->nintervals)
		*ns = c->intervals[c->nintervals - 1].iv->end_ns;
	else
		return false;
	return true;
}

const char *rep_capture_probe_spec(const struct rep_capture *c, uint32_t id)
{
	for (uint32_t i = 0; c->meta && i < c->meta->nprobes; i++)
		if (c->meta->probes[i].id == id && c->meta->probes[i].spec)
			return c->meta->probes[i].spec;
	return NULL;
}

bool rep_capture_weight_us(const struct rep_capture *c)
{
	const char *w = c->meta ? cap_meta_get(c->meta, "weight") : NULL;

	return w && !strcmp(w, "us");
}

bool rep_capture_is_profile(const struct rep_capture *c)
{
	const char *mode = c->meta ? cap_meta_get(c->meta, "mode") : NULL;

	/* off-CPU captures print as bcc offcputime does: profile's layout */
	return mode && (!strcmp(mode, "profile") || !strcmp(mode, "offcpu"));
}

bool rep_capture_meta_i64(const struct rep_capture *c, const char *key, int64_t *v)
{
	const char *s = c->meta ? cap_meta_get(c->meta, key) : NULL;
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && !*end;
}

bool rep_capture_wall_ns(const struct rep_capture *c, uint64_t mono_ns, int64_t *wall)
{
	int64_t mono_ref, real_ref;

	if (!rep_capture_meta_i64(c, "clock.mono_ns", &mono_ref) ||
	    !rep_capture_meta_i64(c, "clock.real_ns", &real_ref))
		return false;
	/* unsigned arithmetic: hostile values wrap instead of overflowing a signed type */
	*wall = (int64_t)((uint64_t)real_ref + (mono_ns - (uint64_t)mono_ref));
	return true;
}
