// SPDX-License-Identifier: MIT
/*
 * snapshot.c: the drain protocol (docs/bpf.md 4). Flip the generation, wait until no program can
 * still write the old one, then move the idle generation's counts and stacks out of BPF (one
 * batch syscall per map, deleting as it reads) into an interval: stacks deduplicated by content
 * (BPF's stack hashes never reach the disk), rows merged by key. An interval may take several
 * drains: the main loop drains early when a generation's maps fill up, and the counts add up.
 */
#include <errno.h>
#include <pthread.h>
#include <search.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "write.h"
#include <linux/types.h>

#include "stk/abi.h"

unsigned int rec_flip(const struct rec_maps *maps)
{
	uint32_t seq = *maps->gen_seq;

	*maps->gen_seq = seq + 1;
	__sync_synchronize();
	/*
	 * Every BPF tracing program runs inside an RCU read-side critical section, and
	 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu() in the kernel: when it returns, every program
	 * that could have read the old generation has finished. Without membarrier (nohz_full
	 * kernels refuse it) a 50 ms sleep is far longer than any program runs.
	 */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(50000);
	/*
	 * From here on the old generation is read: a program still counting into it reports
	 * itself (STK_STAT_DRAIN_RACE, bpf/stkrec.bpf.c leave()). The barrier orders this store
	 * before the map reads that follow.
	 */
	*maps->drained_seq = seq + 1;
	__sync_synchronize();
	return seq & 1;
}

bool rec_maps__filling(const struct rec_maps *maps)
{
	unsigned int g = *maps->gen_seq & 1;

	/* --offcpu: every stack is in stacks0, whichever generation counts */
	return maps->nstacks[maps->offcpu ? 0 : g] >= rec_half_full(maps->stack_entries) ||
	       maps->nkeys[g] >= rec_half_full(maps->count_entries);
}

int rec_read_stats(const struct rec_maps *maps, uint64_t *prev, uint64_t *delta, int nstats)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (int k = 0; k < nstats; k++) {
		uint32_t key = k;
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(maps->stats_fd, &key, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			sum += vals[c];
		delta[k] = sum - prev[k];
		prev[k] = sum;
	}
	free(vals);
	return 0;
}

/* ---- stack table: content -> 1-based index, insertion order kept ------------------------- */

struct rec_stack_table {
	void *root;		/* tsearch tree of struct cap_stack * */
	struct cap_stack *v;
	uint32_t n, cap;
};

static int cmp_stack(const void *a, const void *b)
{
	const struct cap_stack *x = a, *y = b;

	if (x->nips != y->nips)
		return x->nips < y->nips ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	return memcmp(x->ips, y->ips, x->nips * sizeof(*x->ips));
}

struct rec_stack_table *rec_stack_table__new(void)
{
	return calloc(1, sizeof(struct rec_stack_table));
}

void rec_stack_table__free(struct rec_stack_table *t)
{
	if (!t)
		return;
	tdestroy(t->root, free);	/* the nodes; their ips are the ones t->v holds */
	for (uint32_t i = 0; i < t->n; i++)
		free(t->v[i].ips);
	free(t->v);
	free(t);
}

/*
 * The tree holds heap copies of the keys, not pointers into t->v, which moves on realloc; the
 * copy's ips pointer is the one t->v keeps, and nips/flags never change.
 */
struct stack_node {
	struct cap_stack s;
	uint32_t index;
};

static int cmp_node(const void *a, const void *b)
{
	return cmp_stack(&((const struct stack_node *)a)->s, &((const struct stack_node *)b)->s);
}

int rec_stack_table__add(struct rec_stack_table *t, const uint64_t *ips, uint32_t nips,
			 uint32_t flags)
{
	struct stack_node key = { .s = { flags, nips, (uint64_t *)ips } }, *node, **found;

	found = tfind(&key, &t->root, cmp_node);
	if (found)
		return (*found)->index;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct cap_stack *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	node = malloc(sizeof(*node));
	if (!node)
		return -ENOMEM;
	node->s.flags = flags;
	node->s.nips = nips;
	node->s.ips = malloc(nips ? nips * sizeof(*ips) : 1);
	if (!node->s.ips) {
		free(node);
		return -ENOMEM;
	}
	memcpy(node->s.ips, ips, nips * sizeof(*ips));
	node->index = t->n + 1;
	if (!tsearch(node, &t->root, cmp_node)) {
		free(node->s.ips);
		free(node);
		return -ENOMEM;
	}
	t->v[t->n++] = node->s;
	return node->index;
}

uint32_t rec_stack_table__take(struct rec_stack_table *t, struct cap_stack **out)
{
	uint32_t n = t->n;

	tdestroy(t->root, free);	/* the nodes only; their ips now belong to *out */
	t->root = NULL;
	*out = t->v;
	t->v = NULL;
	t->n = t->cap = 0;
	return n;
}

/*
 * Buffers for reading a whole map at once, sized for its max_entries: malloc'ed pages are
 * touched only as far as a read fills them.
 */
struct batch {
	void *keys, *values;
	uint32_t max;
	size_t key_sz, val_sz;
};

static int batch_init(struct batch *b, uint32_t max, size_t key_sz, size_t val_sz)
{
	b->max = max;
	b->key_sz = key_sz;
	b->val_sz = val_sz;
	b->keys = malloc((size_t)max * key_sz);
	b->values = malloc((size_t)max * val_sz);
	return b->keys && b->values ? 0 : -ENOMEM;
}

static void batch_free(struct batch *b)
{
	free(b->keys);
	free(b->values);
}

/*
 * Read and delete every entry of a hash map that no program writes: one
 * BPF_MAP_LOOKUP_AND_DELETE_BATCH per call, instead of three syscalls per entry. Returns the
 * number of entries now in b, or -errno.
 */
static int take_all(struct batch *b, int fd)
{
	uint32_t total = 0, token = 0;
	bool first = true;
	int err;

	for (;;) {
		uint32_t count = b->max - total;

		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token,
						      (char *)b->keys + (size_t)total * b->key_sz,
						      (char *)b->values + (size_t)total * b->val_sz,
						      &count, NULL);
		first = false;
		total += count;
		if (err)
			return errno == ENOENT ? (int)total : -errno;	/* ENOENT: the end */
		if (total >= b->max)
			return total;
	}
}

/* ---- stacks by hash: what BPF stored, and where it went in the batch ---------------------- */

/*
 * One stack BPF stored, by its hash. A hash names the same content in both generations for the
 * whole run, so an entry also remembers its index in the current batch's table (valid while
 * batch matches) for the entry return address it was last built with.
 */
struct cached_stack {
	uint64_t id;		/* 0: a free slot */
	uint64_t *ips;
	uint16_t nips, stop;	/* enum stk_stop */
	uint16_t pystop;	/* enum stk_pystop */
	bool py;		/* holds Python frames: its capture stack depends on the process */
	uint32_t batch;
	uint32_t pid;		/* with py: the process idx was built for */
	uint64_t ret;
	int32_t idx;		/* 1-based index in the batch's table */
};

struct rec_stacks {
	const struct rec_maps *maps;
	size_t value_size;	/* of a stacks-map value: 8 + depth * 8 */
	struct cached_stack *slots;	/* open addressing, linear probing */
	uint32_t nslots, nused;
	uint64_t *with_ret;	/* a stack with the entry return address inserted */
	struct rec_stack_table *tab[2];	/* [user]: kernel, user stacks of the batch */
	uint32_t batch;
	uint64_t losses[CAP_LOSS__COUNT];	/* of this batch, weighted by events */
	struct batch read;	/* a whole stacks map at a time */
	void *one;		/* a single stacks-map value */
	struct rec_python *py;	/* Python frames to capture ids (NULL: left out) */
	uint64_t *py_words;	/* a stack with its Python frames turned into ids */
};

static void cache_clear(struct rec_stacks *r)
{
	for (uint32_t i = 0; i < r->nslots; i++)
		free(r->slots[i].ips);
	memset(r->slots, 0, r->nslots * sizeof(*r->slots));
	r->nused = 0;
}

static struct cached_stack *cache_slot(struct rec_stacks *r, uint64_t id)
{
	uint32_t mask = r->nslots - 1, i = (uint32_t)(id ^ (id >> 32)) & mask;

	while (r->slots[i].id && r->slots[i].id != id)
		i = (i + 1) & mask;
	return &r->slots[i];
}

static int cache_grow(struct rec_stacks *r)
{
	struct cached_stack *old = r->slots;
	uint32_t n = r->nslots;

	r->slots = calloc(n * 2, sizeof(*r->slots));
	if (!r->slots) {
		r->slots = old;
		return -ENOMEM;
	}
	r->nslots = n * 2;
	for (uint32_t i = 0; i < n; i++)
		if (old[i].id)
			*cache_slot(r, old[i].id) = old[i];
	free(old);
	return 0;
}

/* Whether a stack holds Python frames: then its capture stack depends on the process. */
static bool has_python(const uint64_t *ips, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (STK_PYWORD_IS(ips[i]))
			return true;
	return false;
}

/* Cache a stack-map value under id (a no-op when known: a hash names one content). */
static struct cached_stack *cache_put(struct rec_stacks *r, uint64_t id, const void *value)
{
	const struct stk_stack *v = value;
	struct cached_stack *e;
	uint32_t nips = v->nr;

	if ((r->nused + 1) * 2 > r->nslots && cache_grow(r))
		return NULL;
	e = cache_slot(r, id);
	if (e->id)
		return e;
	if (nips > r->maps->depth)
		nips = r->maps->depth;
	e->ips = malloc(nips ? nips * sizeof(uint64_t) : 1);
	if (!e->ips)
		return NULL;
	memcpy(e->ips, v->ips, nips * sizeof(uint64_t));
	e->id = id;
	e->nips = nips;
	e->stop = v->stop;
	e->pystop = v->pystop;
	e->py = has_python(e->ips, nips);
	r->nused++;
	return e;
}

struct rec_stacks *rec_stacks__new(const struct rec_maps *maps)
{
	struct rec_stacks *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->maps = maps;
	r->value_size = 8 + maps->depth * sizeof(uint64_t);
	r->batch = 1;
	r->nslots = 1024;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	r->with_ret = calloc(maps->depth + 1, sizeof(*r->with_ret));
	r->tab[0] = rec_stack_table__new();
	r->tab[1] = rec_stack_table__new();
	r->one = malloc(r->value_size);
	r->py_words = calloc(maps->depth + 1, sizeof(*r->py_words));
	if (!r->slots || !r->with_ret || !r->tab[0] || !r->tab[1] || !r->one || !r->py_words ||
	    batch_init(&r->read, maps->stack_entries, sizeof(uint64_t), r->value_size)) {
		rec_stacks__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void rec_stacks__free(struct rec_stacks *r)
{
	if (!r)
		return;
	if (r->slots)
		cache_clear(r);
	free(r->slots);
	rec_stack_table__free(r->tab[0]);
	rec_stack_table__free(r->tab[1]);
	free(r->with_ret);
	free(r->one);
	free(r->py_words);
	batch_free(&r->read);
	free(r);
}

int rec_stacks__collect(struct rec_stacks *r, unsigned int g)
{
	const uint64_t *ids = r->read.keys;
	int n = take_all(&r->read, r->maps->stacks_fd[g]);

	for (int i = 0; i < n; i++)
		if (!cache_put(r, ids[i], (char *)r->read.values + (size_t)i * r->value_size))
			return -ENOMEM;
	/* --offcpu shares stacks0 between generations, and BPF goes on adding to it */
	r->maps->nstacks[r->maps->offcpu ? 0 : g] = 0;
	return n < 0 ? n : 0;
}

/* A stack the batch read did not bring (--snoop reads them as events arrive): from the map. */
static struct cached_stack *fetch(struct rec_stacks *r, unsigned int g, uint64_t id, int *err)
{
	struct cached_stack *e = cache_slot(r, id);

	*err = 0;
	if (e->id)
		return e;
	if (bpf_map_lookup_elem(r->maps->stacks_fd[g], &id, r->one)) {
		*err = -errno;
		return NULL;
	}
	e = cache_put(r, id, r->one);
	if (!e)
		*err = -ENOMEM;
	return e;
}

/* The capture's loss kind of a user stack's stop reason; -1 when it is complete (or unknown). */
static int stop_loss(unsigned int stop)
{
	switch (stop) {
	case STK_STOP_TRUNCATED:
		return CAP_LOSS_USTACK_TRUNCATED;
	case STK_STOP_PROC_UNKNOWN:
		return CAP_LOSS_USTACK_PROC_UNKNOWN;
	case STK_STOP_NO_MAPPING:
		return CAP_LOSS_USTACK_NO_MAPPING;
	case STK_STOP_NO_CFI:
		return CAP_LOSS_USTACK_NO_CFI;
	case STK_STOP_UNSUPPORTED:
		return CAP_LOSS_USTACK_UNSUPPORTED;
	case STK_STOP_READ_FAULT:
		return CAP_LOSS_USTACK_READ_FAULT;
	case STK_STOP_BAD_FRAME:
		return CAP_LOSS_USTACK_BAD_FRAME;
	case STK_STOP_TABLE_LIMIT:
		return CAP_LOSS_USTACK_TABLE_LIMIT;
	case STK_STOP_COPY_END:
		return CAP_LOSS_USTACK_COPY_END;
	case STK_STOP_DEFER_FULL:
		return CAP_LOSS_USTACK_DEFER_FULL;
	}
	return -1;
}

void rec_stacks__set_python(struct rec_stacks *r, struct rec_python *py)
{
	r->py = py;
}

/* The capture's loss kind of why a stack's Python frames end; -1 when they are whole. */
static int pystop_loss(unsigned int pystop)
{
	switch (pystop) {
	case STK_PYSTOP_TRUNCATED:
		return CAP_LOSS_PY_TRUNCATED;
	case STK_PYSTOP_READ_FAULT:
		return CAP_LOSS_PY_READ_FAULT;
	case STK_PYSTOP_BAD_FRAME:
		return CAP_LOSS_PY_BAD_FRAME;
	case STK_PYSTOP_NO_THREAD:
		return CAP_LOSS_PY_NO_THREAD;
	}
	return -1;
}

/* A kernel walk (or --unwind fp) does not say why it ended: a full stack was cut. */
static bool truncated(const struct cached_stack *e, uint32_t depth)
{
	return e->stop == STK_STOP_TRUNCATED || (e->stop == STK_STOP_NONE && e->nips >= depth);
}

/*
 * The batch table index of e for one side. ret, when not 0, is the return address at a probed
 * function's entry (stk_key uret/kret), inserted as the second frame unless the unwinder put it
 * there. The entry keeps the last ret: a probed function is usually called from one place.
 */
static int stack_index(struct rec_stacks *r, struct cached_stack *e, bool user, uint64_t ret,
		       uint32_t pid)
{
	const uint64_t *ips = e->ips;
	uint32_t nips = e->nips, flags = truncated(e, r->maps->depth) ? CAP_STACK_F_TRUNCATED : 0;
	int idx;

	if (e->batch == r->batch && e->ret == ret && (!e->py || e->pid == pid))
		return e->idx;
	if (e->py) {
		/* code objects are the process's: the same words name others in another one */
		nips = rec_python__frames(r->py, pid, ips, nips, r->py_words);
		ips = r->py_words;
	}
	if (ret && nips >= 1 && (nips < 2 || ips[1] != ret)) {
		/* The direct caller, which the frame-pointer walk skips at function entry. */
		r->with_ret[0] = ips[0];
		r->with_ret[1] = ret;
		memcpy(r->with_ret + 2, ips + 1, (nips - 1) * sizeof(*ips));
		nips++;
		ips = r->with_ret;
	}
	idx = rec_stack_table__add(r->tab[user], ips, nips, flags);
	if (idx > 0) {
		e->batch = r->batch;
		e->ret = ret;
		e->pid = pid;
		e->idx = idx;
	}
	return idx;
}

static void count_stop(struct rec_stacks *r, const struct cached_stack *e, bool user,
		       uint64_t count)
{
	int kind = user ? stop_loss(e->stop) : -1, pykind = user ? pystop_loss(e->pystop) : -1;

	if (truncated(e, r->maps->depth))
		kind = user ? CAP_LOSS_USTACK_TRUNCATED : CAP_LOSS_KSTACK_TRUNCATED;
	if (kind >= 0)
		r->losses[kind] += count;
	if (pykind >= 0)
		r->losses[pykind] += count;
}

int rec_stacks__fill(struct rec_stacks *r, unsigned int g, bool user, uint64_t id, int32_t serr,
		     uint64_t ret, struct cap_row *row)
{
	uint32_t *ref = user ? &row->ustack : &row->kstack;
	struct cached_stack *e;
	int idx, err;

	if (serr == STK_STACK_NOT_WANTED || serr == STK_STACK_NONE)
		return 0;
	e = serr ? NULL : fetch(r, g, id, &err);
	/*
	 * A stack BPF could not take or store (serr), or one that is not in the map (ENOENT) is
	 * left out, and the row says it was lost; any other failure fails the run.
	 */
	if (!serr && !e && err != -ENOENT)
		return err;
	if (!e) {
		row->flags |= user ? CAP_ROW_F_USTACK_LOST : CAP_ROW_F_KSTACK_LOST;
		return 0;
	}
	idx = stack_index(r, e, user, ret, row->pid);
	if (idx < 0)
		return idx;
	*ref = idx;
	count_stop(r, e, user, row->count);
	return 0;
}

int rec_stacks__fill_walked(struct rec_stacks *r, const uint64_t *ips, uint32_t n,
			    uint32_t stop, struct cap_row *row)
{
	struct cached_stack e = { .ips = (uint64_t *)ips, .nips = n, .stop = REC_WALK_STOP(stop),
				  .pystop = REC_WALK_PYSTOP(stop) };
	uint32_t flags = truncated(&e, r->maps->depth) ? CAP_STACK_F_TRUNCATED : 0;
	int idx;

	if (has_python(ips, n)) {
		/* a deferred event's walk: the Python lock taken only for a stack that needs it */
		n = rec_python__frames(r->py, row->pid, ips, n, r->py_words);
		ips = r->py_words;
	}
	idx = rec_stack_table__add(r->tab[1], ips, n, flags);
	if (idx < 0)
		return idx;
	row->ustack = idx;
	count_stop(r, &e, true, row->count);
	return 0;
}

void rec_stacks__take(struct rec_stacks *r, struct cap_interval *iv, struct rec_drain_stats *st)
{
	iv->nkstacks = rec_stack_table__take(r->tab[0], &iv->kstacks);
	iv->nustacks = rec_stack_table__take(r->tab[1], &iv->ustacks);
	for (int k = 0; k < CAP_LOSS__COUNT; k++)
		st->losses[k] += r->losses[k];
	memset(r->losses, 0, sizeof(r->losses));
	r->batch++;	/* the table indexes the entries hold died with the batch */
	/*
	 * The next batch reads its generation's stacks again, so the cache can go. Not with
	 * --offcpu: a blocked task's count arrives when it runs again, maybe intervals after its
	 * stack was read (and deleted from BPF).
	 */
	if (!r->maps->offcpu)
		cache_clear(r);
}

/* ---- counts: drains add up into one interval ---------------------------------------------- */

/* A row being gathered, with the image its events ran in (struct stk_key image_ns). */
struct counted {
	struct cap_row row;
	uint64_t image_ns;
};

struct rec_counts {
	const struct rec_maps *maps;
	struct rec_stacks *stacks;
	struct batch read;	/* a whole counts map at a time */
	struct counted *rows;
	uint32_t nrows, cap;
};

void rec_counts__set_python(struct rec_counts *c, struct rec_python *py)
{
	rec_stacks__set_python(c->stacks, py);
}

struct rec_counts *rec_counts__new(const struct rec_maps *maps)
{
	struct rec_counts *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->maps = maps;
	c->stacks = rec_stacks__new(maps);
	if (!c->stacks ||
	    batch_init(&c->read, maps->count_entries, sizeof(uint64_t), sizeof(struct stk_count))) {
		rec_counts__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void rec_counts__free(struct rec_counts *c)
{
	if (!c)
		return;
	rec_stacks__free(c->stacks);
	batch_free(&c->read);
	free(c->rows);
	free(c);
}

/* A new row from k, counting count events (no stacks yet). */
static struct cap_row *new_row(struct rec_counts *c, const struct stk_key *k, uint64_t count)
{
	struct counted *r;

	if (rec_grow(&c->rows, c->nrows, &c->cap, sizeof(*c->rows), 256))
		return NULL;
	r = &c->rows[c->nrows++];
	rec_row_from_key(&r->row, k, count);
	r->image_ns = k->image_ns;
	return &r->row;
}

void rec_row_from_key(struct cap_row *row, const struct stk_key *k, uint64_t count)
{
	memset(row, 0, sizeof(*row));
	row->probe = k->probe;
	row->pid = k->tgid;
	row->tid = k->pid;
	row->count = count;
	memcpy(row->comm, k->comm, sizeof(row->comm) - 1);
}

static int add_row(struct rec_counts *c, unsigned int g, const struct stk_key *k, uint64_t count)
{
	struct cap_row *row = new_row(c, k, count);
	int err;

	if (!row)
		return -ENOMEM;
	/* kret: a kprobe's direct caller, which some unwinders skip (docs/bpf.md 5). */
	err = rec_stacks__fill(c->stacks, g, false, k->kstack, k->kerr, k->kret, row);
	if (!err)
		err = rec_stacks__fill(c->stacks, g, true, k->ustack, k->uerr, k->uret, row);
	return err;
}

int rec_counts__drain(struct rec_counts *c, unsigned int g)
{
	const struct stk_count *counts = c->read.values;	/* the keys are their digests */
	int n, err;

	/* Counts first: a program stores a stack before the count that names it. */
	n = take_all(&c->read, c->maps->counts_fd[g]);
	if (n < 0)
		return n;
	err = rec_stacks__collect(c->stacks, g);
	for (int i = 0; i < n && !err; i++)
		err = add_row(c, g, &counts[i].key, counts[i].count);
	c->maps->nkeys[g] = 0;	/* g is idle: nothing adds to it meanwhile */
	return err;
}

int rec_counts__add_walked(struct rec_counts *c, const struct stk_key *k, unsigned int g,
			   uint64_t count, const uint64_t *ips, uint32_t n, uint32_t stop)
{
	struct cap_row *row = new_row(c, k, count);
	int err;

	if (!row)
		return -ENOMEM;
	err = rec_stacks__fill(c->stacks, g & 1, false, k->kstack, k->kerr, k->kret, row);
	return err ? err : rec_stacks__fill_walked(c->stacks, ips, n, stop, row);
}

/* Rows equal but for the count: the same key drained in two generations of one interval. */
static int cmp_row(const void *a, const void *b)
{
	const struct counted *cx = a, *cy = b;
	const struct cap_row *x = &cx->row, *y = &cy->row;

#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(pid);
	CMP(tid);
	CMP(probe);
	CMP(ustack);
	CMP(kstack);
	CMP(flags);
#undef CMP
	if (cx->image_ns != cy->image_ns)
		return cx->image_ns < cy->image_ns ? -1 : 1;
	return memcmp(x->comm, y->comm, sizeof(x->comm));
}

static uint32_t merge_rows(struct counted *rows, uint32_t n)
{
	uint32_t kept = 0;

	if (n)
		qsort(rows, n, sizeof(*rows), cmp_row);
	for (uint32_t i = 0; i < n; i++) {
		if (kept && !cmp_row(&rows[kept - 1], &rows[i]))
			rows[kept - 1].row.count += rows[i].row.count;
		else
			rows[kept++] = rows[i];
	}
	return kept;
}

int rec_counts__take(struct rec_counts *c, struct cap_interval *iv, uint64_t **images,
		     struct rec_drain_stats *st)
{
	uint32_t n = merge_rows(c->rows, c->nrows);

	iv->rows = malloc((n ? n : 1) * sizeof(*iv->rows));
	*images = malloc((n ? n : 1) * sizeof(**images));
	if (!iv->rows || !*images) {
		free(iv->rows);
		free(*images);
		iv->rows = NULL;
		*images = NULL;
		return -ENOMEM;
	}
	iv->nrows = n;
	for (uint32_t i = 0; i < n; i++) {
		iv->rows[i] = c->rows[i].row;
		(*images)[i] = c->rows[i].image_ns;
		st->events += iv->rows[i].count;
	}
	c->nrows = 0;	/* the array stays for the next interval */
	rec_stacks__take(c->stacks, iv, st);
	return 0;
}

void rec_interval_free(struct cap_interval *iv)
{
	for (uint32_t i = 0; i < iv->nkstacks; i++)
		free(iv->kstacks[i].ips);
	for (uint32_t i = 0; i < iv->nustacks; i++)
		free(iv->ustacks[i].ips);
	free(iv->kstacks);
	free(iv->ustacks);
	free(iv->rows);
	memset(iv, 0, sizeof(*iv));
}
