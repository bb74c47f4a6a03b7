// SPDX-License-Identifier: MIT
/*
 * snapshot.c: the drain protocol (docs/bpf.md). Flip the generation, wait until no program can
 * still write the old one, then copy the idle generation's counts and the stacks they reference
 * into a cap_interval (stacks deduplicated by content: kernel stack ids never reach the disk),
 * and clear both maps of that generation for its next turn.
 */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rec.h"
#include <linux/types.h>

#include "stk/abi.h"

uint64_t rec_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

unsigned int rec_flip(const struct rec_maps *maps)
{
	unsigned int old = *maps->gen;

	*maps->gen = !old;
	__sync_synchronize();
	/*
	 * Every BPF tracing program runs inside an RCU read-side critical section, and
	 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu() in the kernel: when it returns, every program
	 * that could have read the old generation has finished. Without membarrier (nohz_full
	 * kernels refuse it) a 50 ms sleep is far longer than any program runs.
	 */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(50000);
	return old;
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

uint32_t rec_stack_depth(const uint64_t *ips, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && ips[n])
		n++;
	return n;
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

/* ---- stack ids -> a batch's stack tables ------------------------------------------------ */

/* What a stack id (of one generation, one side) resolved to in the current batch. */
struct slot {
	uint64_t ret;		/* the uret/kret the stack was built with */
	uint32_t batch;		/* the batch idx belongs to: older ones are stale */
	int32_t idx;		/* 1-based index in the batch's table */
};

struct rec_stacks {
	const struct rec_maps *maps;
	uint64_t *buf;		/* one stack-map value */
	uint64_t *with_ret;	/* a stack with the entry return address inserted */
	struct rec_stack_table *tab[2];	/* [user]: kernel, user stacks of the batch */
	/*
	 * [generation][user], indexed by stack id. A --snoop batch holds events of both
	 * generations (before and after the flip), and an id names a different stack in each.
	 * Ending a batch bumps `batch` instead of clearing them.
	 */
	struct slot *slots[2][2];
	uint32_t batch;
	uint64_t truncated[2];	/* [user]: events with a cut stack, this batch */
};

struct rec_stacks *rec_stacks__new(const struct rec_maps *maps)
{
	struct rec_stacks *r = calloc(1, sizeof(*r));
	bool ok;

	if (!r)
		return NULL;
	r->maps = maps;
	r->batch = 1;		/* calloc'ed slots (batch 0) are stale */
	r->buf = calloc(maps->depth, sizeof(*r->buf));
	r->with_ret = calloc(maps->depth + 1, sizeof(*r->with_ret));
	r->tab[0] = rec_stack_table__new();
	r->tab[1] = rec_stack_table__new();
	ok = r->buf && r->with_ret && r->tab[0] && r->tab[1];
	for (int g = 0; g < 2 && ok; g++)
		for (int u = 0; u < 2 && ok; u++)
			ok = (r->slots[g][u] = calloc(maps->stack_entries, sizeof(struct slot)));
	if (!ok) {
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
	for (int g = 0; g < 2; g++)
		for (int u = 0; u < 2; u++)
			free(r->slots[g][u]);
	rec_stack_table__free(r->tab[0]);
	rec_stack_table__free(r->tab[1]);
	free(r->buf);
	free(r->with_ret);
	free(r);
}

/*
 * Stack `id` of generation g in the batch's table: its 1-based index or -errno. The slot keeps
 * the last ret seen: a probed function is usually called from one place, so the map is read
 * once per stack and batch, not once per row or event.
 */
static int stack_index(struct rec_stacks *r, unsigned int g, bool user, int32_t id, uint64_t ret)
{
	uint32_t depth = r->maps->depth, nips, flags = 0;
	const uint64_t *ips = r->buf;
	struct slot *sl;
	int idx;

	if (id < 0 || (uint32_t)id >= r->maps->stack_entries)
		return -EINVAL;
	sl = &r->slots[g][user][id];
	if (sl->batch == r->batch && sl->ret == ret)
		return sl->idx;
	memset(r->buf, 0, depth * sizeof(*r->buf));
	if (bpf_map_lookup_elem(r->maps->stacks_fd[g], &id, r->buf))
		return -errno;
	nips = rec_stack_depth(r->buf, depth);
	if (nips == depth)
		flags |= CAP_STACK_F_TRUNCATED;
	if (ret && nips >= 1 && (nips < 2 || r->buf[1] != ret)) {
		/* The direct caller, which the frame-pointer walk skips at function entry. */
		r->with_ret[0] = r->buf[0];
		r->with_ret[1] = ret;
		memcpy(r->with_ret + 2, r->buf + 1, (nips - 1) * sizeof(*r->buf));
		nips++;
		ips = r->with_ret;
	}
	idx = rec_stack_table__add(r->tab[user], ips, nips, flags);
	if (idx > 0)
		*sl = (struct slot){ .ret = ret, .batch = r->batch, .idx = idx };
	return idx;
}

static bool stack_wanted(int32_t id)
{
	return id != STK_STACK_NOT_WANTED && id != STK_STACK_NONE;
}

int rec_stacks__fill(struct rec_stacks *r, unsigned int g, bool user, int32_t id, uint64_t ret,
		     struct cap_row *row)
{
	uint32_t *ref = user ? &row->ustack : &row->kstack;
	int idx = -ENOENT;

	if (id >= 0)
		idx = stack_index(r, g, user, id, ret);
	/*
	 * ENOENT (no such id: a collision in BPF, or an id that vanished) leaves the stack out
	 * and the row says it was lost; any other lookup error fails the run.
	 */
	if (idx < 0 && idx != -ENOENT)
		return idx;
	if (idx > 0) {
		*ref = idx;
		if (r->tab[user]->v[idx - 1].flags & CAP_STACK_F_TRUNCATED)
			r->truncated[user] += row->count;
	} else if (stack_wanted(id)) {
		row->flags |= user ? CAP_ROW_F_USTACK_LOST : CAP_ROW_F_KSTACK_LOST;
	}
	return 0;
}

void rec_stacks__take(struct rec_stacks *r, struct cap_interval *iv, struct rec_drain_stats *st)
{
	iv->nkstacks = rec_stack_table__take(r->tab[0], &iv->kstacks);
	iv->nustacks = rec_stack_table__take(r->tab[1], &iv->ustacks);
	st->losses[CAP_LOSS_KSTACK_TRUNCATED] += r->truncated[0];
	st->losses[CAP_LOSS_USTACK_TRUNCATED] += r->truncated[1];
	r->truncated[0] = r->truncated[1] = 0;
	r->batch++;	/* the table indexes the slots hold died with the batch */
}

/* ---- draining ---------------------------------------------------------------------------- */

struct drain {
	const struct rec_maps *maps;
	unsigned int g;
	struct rec_stacks *stacks;
	struct rec_drain_stats *st;
};

static int fill_row(struct drain *d, const struct stk_key *k, uint64_t count, struct cap_row *row)
{
	int err;

	memset(row, 0, sizeof(*row));
	row->probe = k->probe;
	row->pid = k->tgid;
	row->tid = k->pid;
	row->count = count;
	memcpy(row->comm, k->comm, sizeof(row->comm) - 1);
	/* kret: a kprobe's direct caller, which some unwinders skip (docs/bpf.md 5). */
	err = rec_stacks__fill(d->stacks, d->g, false, k->kstack, k->kret, row);
	if (!err)
		err = rec_stacks__fill(d->stacks, d->g, true, k->ustack, k->uret, row);
	if (!err)
		d->st->events += count;
	return err;
}

/* All keys of a map; the generation is idle, so the set does not change underneath. */
static int map_keys(int fd, size_t key_sz, void **keys, uint32_t *n)
{
	char *v = NULL, *prev = NULL;
	uint32_t count = 0, cap = 0;

	for (;;) {
		if (count == cap) {
			char *nv;

			cap = cap ? cap * 2 : 256;
			nv = realloc(v, (size_t)cap * key_sz);
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		prev = count ? v + (count - 1) * key_sz : NULL;
		if (bpf_map_get_next_key(fd, prev, v + count * key_sz))
			break;
		count++;
	}
	if (errno != ENOENT) {
		free(v);
		return -errno;
	}
	*keys = v;
	*n = count;
	return 0;
}

static void delete_keys(int fd, const void *keys, uint32_t n, size_t key_sz)
{
	for (uint32_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, (const char *)keys + i * key_sz);
}

/* Clear the stack map too: ids no count refers to (counts map full) would leak otherwise. */
static int clear_stacks(struct drain *d)
{
	void *ids = NULL;
	uint32_t n = 0;
	int err;

	/*
	 * --offcpu: a blocked task's stack ids were taken when it was switched out, maybe several
	 * intervals ago, and are counted only when it runs again: they must outlive the drain.
	 * The same stack always hashes to the same id, so the map holds each distinct stack once.
	 */
	if (d->maps->keep_stacks)
		return 0;
	err = map_keys(d->maps->stacks_fd[d->g], sizeof(uint32_t), &ids, &n);
	if (err)
		return err;
	delete_keys(d->maps->stacks_fd[d->g], ids, n, sizeof(uint32_t));
	free(ids);
	return 0;
}

static int drain_rows(struct drain *d, struct cap_interval *iv)
{
	int fd = d->maps->counts_fd[d->g];
	struct stk_key *keys = NULL;
	uint32_t n = 0;
	int err = map_keys(fd, sizeof(*keys), (void **)&keys, &n);

	if (err)
		return err;
	iv->rows = calloc(n ? n : 1, sizeof(*iv->rows));
	if (!iv->rows) {
		free(keys);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n && !err; i++) {
		uint64_t count;

		if (bpf_map_lookup_elem(fd, &keys[i], &count))
			continue;
		err = fill_row(d, &keys[i], count, &iv->rows[iv->nrows]);
		if (!err)
			iv->nrows++;
	}
	if (!err)
		delete_keys(fd, keys, n, sizeof(*keys));
	free(keys);
	return err;
}

int rec_drain(const struct rec_maps *maps, unsigned int g, struct cap_interval *iv,
	      struct rec_drain_stats *st)
{
	struct drain d = { .maps = maps, .g = g, .st = st };
	int err;

	d.stacks = rec_stacks__new(maps);
	if (!d.stacks)
		return -ENOMEM;
	err = drain_rows(&d, iv);
	if (!err)
		err = clear_stacks(&d);
	rec_stacks__take(d.stacks, iv, st);
	rec_stacks__free(d.stacks);
	return err;
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
