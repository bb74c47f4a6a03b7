// SPDX-License-Identifier: MIT
/*
 * load.c: walk a capture into struct rep_capture. Every record that a row needs precedes the row
 * (format.md), so one pass suffices: the process table (latest record of a pid wins) and the
 * kernel symbol table in force are resolved for each row as its interval is read. Damage ends the
 * walk but keeps everything read before it: a damaged capture still yields a report.
 *
 * Memory (format.md 2, "Limits"): the reader's buffer and every decoded record take their bytes
 * from the run's budget (struct cap_budget), and so do the tables made here whose size the
 * input controls (kernel symbol tables, per-row process pointers, the arrays of records and
 * intervals). Going over it ends the walk like damage (-EFBIG at the chunk that did), with
 * what was read before kept.
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
	struct cap_budget *budget;	/* cap * PROC_ENTRY_BYTES taken from it */
};

/* An entry of each array, and the index's share at its fullest (a quarter full). */
#define PROC_ENTRY_BYTES (sizeof(uint32_t) + sizeof(void *) + 4 * 12)

/*
 * Resize *p (a malloc'ed array of size_of-byte elements) from old_n to new_n elements, taking
 * the growth from c's budget first. 0, -EFBIG or -ENOMEM (*p unchanged).
 */
static int grow_array(struct rep_capture *c, void *p, size_t old_n, size_t new_n, size_t size_of)
{
	uint64_t more = (uint64_t)(new_n - old_n) * size_of;
	void *v;

	if (cap_budget__take(c->budget, more))
		return -EFBIG;
	v = realloc(*(void **)p, new_n * size_of);
	if (!v) {
		cap_budget__give(c->budget, more);
		return -ENOMEM;
	}
	*(void **)p = v;
	c->charged += more;
	return 0;
}

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
		uint32_t *pids;
		const struct cap_process **procs;

		if (cap_budget__take(t->budget, (uint64_t)(cap - t->cap) * PROC_ENTRY_BYTES))
			return -EFBIG;
		pids = realloc(t->pids, cap * sizeof(*pids));
		if (pids)
			t->pids = pids;
		procs = pids ? realloc(t->procs, cap * sizeof(*procs)) : NULL;
		if (procs)
			t->procs = procs;
		if (!pids || !procs) {
			cap_budget__give(t->budget, (uint64_t)(cap - t->cap) * PROC_ENTRY_BYTES);
			return -ENOMEM;
		}
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
	cap_budget__give(t->budget, (uint64_t)t->cap * PROC_ENTRY_BYTES);
}

/* Keep rec until rep_capture__free(). */
static int keep(struct rep_capture *c, struct cap_record *rec)
{
	int err;

	if (c->nrecs == c->recs_cap) {
		uint32_t cap = c->recs_cap ? c->recs_cap * 2 : 32;

		err = grow_array(c, &c->recs, c->recs_cap, cap, sizeof(*c->recs));
		if (err)
			return err;
		c->recs_cap = cap;
	}
	c->recs[c->nrecs++] = rec;
	return 0;
}

/* What the walk keeps between chunks. */
struct walk {
	struct proc_table procs;
	/* the kernel symbol table as the records so far make it: the table in force */
	struct rep_ktable *kt;
	/* an interval with kernel stacks was read since the table in force became a table */
	bool ksyms_used;
};

/*
 * Kernel symbol tables (format.md 4.10). Each interval keeps the index of the table in force
 * when it was read; c->ksyms[c->nksyms - 1] is the one in force (w->kt), copied there once no
 * record changes it any more (keep_table()). A KSYMS_ADD record goes into the table in force
 * unless an interval with kernel stacks refers to it and the record changes a name such an
 * interval may have looked up: then the table in force is kept as it was for the intervals read
 * before, and the record makes a new one. Symbols that replace nothing and do not fall after a
 * symbol without a size change no earlier name (a writer adds none where an earlier row found
 * no symbol), so tables are kept at replacements (a module or BPF program reloaded), not for
 * every chunk. A hostile file can make one per interval (a symbol replaced, then an interval
 * using the table): the copies, not only the records, are charged to the budget.
 */

/* What a table holds, as charged: its syms array has room for exactly max(count, 1) symbols. */
static uint64_t ksyms_bytes(const struct cap_ksyms *ks)
{
	return sizeof(*ks) + (uint64_t)(ks->count ? ks->count : 1) * sizeof(*ks->syms);
}

static void ksyms_free(struct rep_capture *c, struct cap_ksyms *ks)
{
	if (!ks)
		return;
	cap_budget__give(c->budget, ksyms_bytes(ks));
	c->charged -= ksyms_bytes(ks);
	free(ks->syms);
	free(ks);
}

/* The table in force (w->kt) as an array in its slot, c->ksyms[c->nksyms - 1]. */
static int keep_table(struct rep_capture *c, struct walk *w)
{
	uint32_t n = rep_ktable__count(w->kt);
	uint64_t bytes = sizeof(struct cap_ksyms) + (uint64_t)(n ? n : 1) * sizeof(struct cap_ksym);
	struct cap_ksyms *ks;

	if (cap_budget__take(c->budget, bytes))
		return -EFBIG;
	ks = calloc(1, sizeof(*ks));
	if (ks)
		ks->syms = malloc((n ? n : 1) * sizeof(*ks->syms));
	if (!ks || !ks->syms) {
		free(ks);
		cap_budget__give(c->budget, bytes);
		return -ENOMEM;
	}
	c->charged += bytes;
	ks->flags = rep_ktable__flags(w->kt);
	ks->count = n;
	rep_ktable__copy(w->kt, ks->syms);
	c->ksyms[c->nksyms - 1] = ks;
	return 0;
}

/*
 * Before a record changes the table: when intervals refer to the table in force, keep it for
 * them and start a new one (an empty slot, filled by keep_table()).
 */
static int new_table(struct rep_capture *c, struct walk *w)
{
	int err;

	if (c->nksyms && !w->ksyms_used)
		return 0;	/* no kernel frame can resolve with it: changed in place */
	if (c->nksyms) {
		err = keep_table(c, w);
		if (err)
			return err;
	}
	err = grow_array(c, &c->ksyms, c->nksyms, c->nksyms + 1, sizeof(*c->ksyms));
	if (err)
		return err;
	c->ksyms[c->nksyms++] = NULL;
	w->ksyms_used = false;
	return 0;
}

/* format.md 4.2: a KSYMS record replaces the table. */
static int set_ksyms(struct rep_capture *c, struct walk *w, const struct cap_ksyms *rec)
{
	int err = new_table(c, w);

	return err ? err : rep_ktable__set(w->kt, rec);
}

/* format.md 4.10: add's symbols join the table, each replacing every symbol it overlaps. */
static int add_ksyms(struct rep_capture *c, struct walk *w, const struct cap_ksyms *add)
{
	int err = 0;

	if (!c->nksyms || rep_ktable__add_changes(w->kt, add))
		err = new_table(c, w);
	return err ? err : rep_ktable__add(w->kt, add);
}

/*
 * Append ptr to a pointer array of *cap entries, doubling it when full: a hostile OBJECTS record
 * holds two million objects, and growing one by one would copy the array each time.
 */
static int push_ptr(struct rep_capture *c, const void ***v, uint32_t *n, uint32_t *cap,
		    const void *ptr)
{
	int err;

	if (*n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 16;

		err = grow_array(c, v, *cap, ncap, sizeof(**v));
		if (err)
			return err;
		*cap = ncap;
	}
	(*v)[(*n)++] = ptr;
	return 0;
}

static int add_losses(struct rep_capture *c, const struct cap_losses *l)
{
	uint32_t i;

	for (i = 0; i < CAP_LOSS__COUNT; i++)
		c->losses[i] = rep_count_add(c->losses[i], l->counts[i], NULL);
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

/*
 * format.md 3.2 (2.2): an interval whose rows ran in two images of one process is several
 * chunks with its seq, one after the other (PROCS records between them), so a chunk with the
 * seq of the chunk before is a part of the same interval, not a new one. 1.1 per-event batches
 * of one interval share a seq the same way.
 */
static bool part_of_previous(const struct rep_capture *c, const struct cap_interval *iv,
			     bool events)
{
	const struct rep_interval *prev = c->nintervals ? &c->intervals[c->nintervals - 1] : NULL;

	return prev && prev->events == events && prev->iv->seq == iv->seq;
}

static int add_interval(struct rep_capture *c, struct cap_interval *iv, struct walk *w,
			bool events)
{
	struct rep_interval *ri;
	uint32_t i;
	int err;

	err = cap_stacks__add(&c->stacks, iv);
	if (err)
		return err;
	if (c->nintervals == c->intervals_cap) {
		uint32_t cap = c->intervals_cap ? c->intervals_cap * 2 : 8;

		err = grow_array(c, &c->intervals, c->intervals_cap, cap, sizeof(*c->intervals));
		if (err)
			return err;
		c->intervals_cap = cap;
	}
	ri = &c->intervals[c->nintervals];
	ri->iv = iv;
	ri->stacks = &c->stacks;
	ri->events = events;
	ri->index = part_of_previous(c, iv, events) ? ri[-1].index : c->nseqs++;
	/* a new array (grow_array() of NULL, not zeroed): the loop below sets all nrows entries */
	ri->procs = NULL;
	err = grow_array(c, &ri->procs, 0, iv->nrows ? iv->nrows : 1, sizeof(*ri->procs));
	if (err)
		return err;
	c->has_events |= events;
	ri->ksyms = c->nksyms ? c->nksyms - 1 : UINT32_MAX;
	for (i = 0; i < iv->nrows; i++) {
		/* 4.0: a row may use the file's stacks when its record holds none */
		w->ksyms_used |= iv->rows[i].kstack != CAP_NO_STACK;
		ri->procs[i] = proc_table__get(&w->procs, iv->rows[i].pid);
		c->events = rep_count_add(c->events, iv->rows[i].count, &c->saturated);
	}
	c->nintervals++;
	return 0;
}

/*
 * Take one decoded record: returns 1 if kept, 0 if it can be freed, or -EFBIG or -ENOMEM (then
 * parts of it may be referenced already: it is kept).
 */
static int take(struct rep_capture *c, struct cap_record *rec, struct walk *w)
{
	uint32_t i;
	int err;

	switch (rec->type) {
	case CAP_CHUNK_META:
		if (c->meta)
			return 0;	/* only the first one describes the capture */
		c->meta = &rec->meta;
		return 1;
	/* the tables copy the symbols, whose strings stay in the record */
	case CAP_CHUNK_KSYMS:
		err = set_ksyms(c, w, &rec->ksyms);
		return err ? err : 1;
	case CAP_CHUNK_KSYMS_ADD:
		err = add_ksyms(c, w, &rec->ksyms);
		return err ? err : 1;
	case CAP_CHUNK_PROCS:
		for (i = 0; i < rec->procs.count; i++) {
			err = proc_table__set(&w->procs, &rec->procs.procs[i]);
			if (err)
				return err;
		}
		return 1;
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS:
		err = add_interval(c, &rec->interval, w, rec->type == CAP_CHUNK_EVENTS);
		return err ? err : 1;
	case CAP_CHUNK_LOSSES:
		err = add_losses(c, &rec->losses);
		return err ? err : 0;
	case CAP_CHUNK_OBJECTS:
		for (i = 0; i < rec->objects.count; i++) {
			err = push_ptr(c, (const void ***)&c->objects, &c->nobjects,
				       &c->objects_cap, &rec->objects.objs[i]);
			if (err)
				return err;
		}
		return 1;
	case CAP_CHUNK_PERFMAP:
		err = push_ptr(c, (const void ***)&c->perfmaps, &c->nperfmaps, &c->perfmaps_cap,
			       &rec->perfmap);
		return err ? err : 1;
	case CAP_CHUNK_CODES:
		for (i = 0; i < rec->codes.count; i++) {
			err = push_ptr(c, (const void ***)&c->codes, &c->ncodes, &c->codes_cap,
				       &rec->codes.codes[i]);
			if (err)
				return err;
		}
		return 1;
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

/* Decode one chunk into c: 0, or the error that ends the walk (-ENOMEM, or data). */
static int walk_chunk(struct rep_capture *c, struct walk *w, const struct cap_chunk *chunk)
{
	struct cap_record *rec;
	int err, kept;

	err = cap_record__decode_budget(chunk, c->budget, &rec);
	if (err)
		return err;
	/* room first: once taken, the record is referenced and must not be freed */
	err = keep(c, rec);
	if (err) {
		cap_record__free(rec);
		return err;
	}
	kept = take(c, rec, w);
	if (!kept) {
		c->nrecs--;
		cap_record__free(rec);
	}
	return kept < 0 ? kept : 0;
}

static struct rep_capture *load(struct cap_reader *r, struct cap_budget *b)
{
	struct walk w = { .procs.budget = b };
	struct rep_capture *c;
	struct cap_chunk chunk = { 0 };
	int err = 0, n;

	c = calloc(1, sizeof(*c));
	w.kt = rep_ktable__new(b);
	if (!c || !w.kt) {
		err = -ENOMEM;
		goto out;
	}
	c->budget = b;
	cap_reader__set_budget(r, b);
	cap_reader__version(r, &c->major, &c->minor);
	cap_stacks__init(&c->stacks, c->major, b);
	while ((n = cap_reader__next(r, &chunk)) > 0) {
		err = walk_chunk(c, &w, &chunk);
		if (err == -ENOMEM)
			goto out;
		if (err) {
			/* malformed, or over the budget: data, like damage */
			c->how = REP_END_ERROR;
			c->err = err;
			c->err_chunk = chunk.index;
			c->err_offset = chunk.offset;
			err = 0;
			goto out;
		}
	}
	if (n < 0)
		stop(c, r, n);
	else
		c->how = c->has_end ? REP_END_CLEAN : REP_END_UNCLOSED;
	sym_codes_sort(c->codes, c->ncodes);	/* a frame names its code by id */
out:
	/* the table in force as it ended, for the intervals that refer to it */
	if (c && c->nksyms && !c->ksyms[c->nksyms - 1] && err != -ENOMEM) {
		int e = keep_table(c, &w);

		if (e == -ENOMEM) {
			err = e;
		} else if (e && c->how != REP_END_ERROR) {
			c->how = REP_END_ERROR;
			c->err = e;
			c->err_chunk = chunk.index;
			c->err_offset = chunk.offset;
		}
	}
	rep_ktable__free(w.kt);
	proc_table__clear(&w.procs);
	cap_reader__close(r);
	if (err) {
		rep_capture__free(c);
		errno = -err;
		return NULL;
	}
	return c;
}

struct rep_capture *rep_capture__load(const char *path, struct cap_budget *b)
{
	struct cap_reader *r = cap_reader__open(path);

	return r ? load(r, b) : NULL;
}

struct rep_capture *rep_capture__load_mem(const void *buf, size_t len, struct cap_budget *b)
{
	struct cap_reader *r = cap_reader__open_mem(buf, len);

	return r ? load(r, b) : NULL;
}

void rep_capture__free(struct rep_capture *c)
{
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < c->nintervals; i++)
		free(c->intervals[i].procs);
	free(c->intervals);
	for (i = 0; i < c->nksyms; i++)
		ksyms_free(c, c->ksyms[i]);
	free(c->ksyms);
	cap_stacks__release(&c->stacks);
	free(c->cpu_dropped);
	free(c->objects);
	free(c->perfmaps);
	free(c->codes);
	for (i = 0; i < c->nrecs; i++)
		cap_record__free(c->recs[i]);
	free(c->recs);
	/* what grow_array() and the interval procs arrays took */
	cap_budget__give(c->budget, c->charged);
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
		.memory = o->memory,
		.debug = o->debug,
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
