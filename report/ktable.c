// SPDX-License-Identifier: MIT
/*
 * ktable.c: the kernel symbol table as a walk builds it from KSYMS and KSYMS_ADD records
 * (format.md 4.10), in a treap keyed by address: a KSYMS_ADD record of m symbols costs
 * O(m log n) plus the symbols it replaces, whatever the table holds. load.c copies it into a
 * sorted array (struct cap_ksyms) for each table an interval keeps; merging every record into a
 * sorted array of the whole table instead cost O(n) a record: a 32 MiB KSYMS table and 1,200
 * one-symbol KSYMS_ADD records (216 KB on disk) took 91 s.
 *
 * The symbols are the records' (borrowed); a node holds a pointer to one. The nodes live in one
 * array, taken from the run's memory budget as it grows; removed ones are reused. Priorities
 * are random (getrandom()), so that no input can make the tree deep: the recursions below go
 * O(log n) deep, and the tree's shape never shows in a result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "report.h"

#define NIL 0u	/* node 0 is never used: 0 is "none" */

struct knode {
	const struct cap_ksym *sym;
	uint32_t left, right;
	uint32_t prio;
};

struct rep_ktable {
	struct knode *nodes;
	uint32_t cap, used;	/* nodes[1..used) have been handed out */
	uint32_t free_list;	/* removed nodes, chained through .left */
	uint32_t root, count;
	uint32_t flags;		/* CAP_KSYMS_F_* of the table */
	uint64_t rng;
	struct rep_charge charge;
};

static uint32_t next_prio(struct rep_ktable *t)
{
	/* xorshift64: the seed is what must be unknown to the input, not the sequence */
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return (uint32_t)(t->rng >> 32);
}

struct rep_ktable *rep_ktable__new(struct cap_budget *b)
{
	struct rep_ktable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->charge.budget = b;
	if (getrandom(&t->rng, sizeof(t->rng), GRND_NONBLOCK) != sizeof(t->rng))
		t->rng = (uintptr_t)t ^ 0x9e3779b97f4a7c15ull;
	t->rng |= 1;
	return t;
}

void rep_ktable__free(struct rep_ktable *t)
{
	if (!t)
		return;
	free(t->nodes);
	rep_charge__clear(&t->charge);
	free(t);
}

static uint64_t addr_of(const struct rep_ktable *t, uint32_t n)
{
	return t->nodes[n].sym->addr;
}

/* A node for sym (0 on -EFBIG or -ENOMEM, *err set). */
static uint32_t node_new(struct rep_ktable *t, const struct cap_ksym *sym, int *err)
{
	uint32_t n;

	if (t->free_list) {
		n = t->free_list;
		t->free_list = t->nodes[n].left;
	} else {
		if (t->used == t->cap || !t->cap) {
			uint32_t cap = t->cap ? t->cap * 2 : 64;
			struct knode *v;

			if (cap <= t->cap || rep_charge__take(&t->charge, (uint64_t)(cap - t->cap) *
							      sizeof(*v))) {
				*err = -EFBIG;
				return NIL;
			}
			v = realloc(t->nodes, (size_t)cap * sizeof(*v));
			if (!v) {
				*err = -ENOMEM;
				return NIL;
			}
			t->nodes = v;
			t->cap = cap;
			if (!t->used)
				t->used = 1;	/* skip NIL */
		}
		n = t->used++;
	}
	t->nodes[n] = (struct knode){ sym, NIL, NIL, next_prio(t) };
	t->count++;
	return n;
}

/* Every node of the subtree at n back to the free list. */
static void free_subtree(struct rep_ktable *t, uint32_t n)
{
	while (n != NIL) {
		uint32_t left = t->nodes[n].left;

		free_subtree(t, t->nodes[n].right);
		t->nodes[n].left = t->free_list;
		t->free_list = n;
		t->count--;
		n = left;
	}
}

/* Split n into the nodes below key (*l) and the others (*r). */
static void split(struct rep_ktable *t, uint32_t n, uint64_t key, uint32_t *l, uint32_t *r)
{
	if (n == NIL) {
		*l = *r = NIL;
	} else if (addr_of(t, n) < key) {
		split(t, t->nodes[n].right, key, &t->nodes[n].right, r);
		*l = n;
	} else {
		split(t, t->nodes[n].left, key, l, &t->nodes[n].left);
		*r = n;
	}
}

/* Join l and r, every address of l at or below every address of r. */
static uint32_t merge(struct rep_ktable *t, uint32_t l, uint32_t r)
{
	if (l == NIL)
		return r;
	if (r == NIL)
		return l;
	if (t->nodes[l].prio > t->nodes[r].prio) {
		t->nodes[l].right = merge(t, t->nodes[l].right, r);
		return l;
	}
	t->nodes[r].left = merge(t, l, t->nodes[r].left);
	return r;
}

/* The node of the highest address below key (after the others at that address), or NIL. */
static uint32_t below(const struct rep_ktable *t, uint64_t key)
{
	uint32_t n = t->root, best = NIL;

	while (n != NIL) {
		if (addr_of(t, n) < key) {
			best = n;
			n = t->nodes[n].right;
		} else {
			n = t->nodes[n].left;
		}
	}
	return best;
}

/* The node of the lowest address at or above key, or NIL. */
static uint32_t at_or_above(const struct rep_ktable *t, uint64_t key)
{
	uint32_t n = t->root, best = NIL;

	while (n != NIL) {
		if (addr_of(t, n) >= key) {
			best = n;
			n = t->nodes[n].left;
		} else {
			n = t->nodes[n].right;
		}
	}
	return best;
}

int rep_ktable__set(struct rep_ktable *t, const struct cap_ksyms *rec)
{
	uint32_t *spine = NULL, depth = 0, i;
	int err = 0;

	free_subtree(t, t->root);
	t->root = NIL;
	t->flags = rec->flags;
	if (!rec->count)
		return 0;
	/* the records are sorted: a Cartesian tree by priority, in O(n), kept in file order */
	spine = malloc((size_t)rec->count * sizeof(*spine));
	if (!spine)
		return -ENOMEM;
	for (i = 0; i < rec->count && !err; i++) {
		uint32_t n = node_new(t, &rec->syms[i], &err), last = NIL;

		if (n == NIL)
			break;
		while (depth && t->nodes[spine[depth - 1]].prio < t->nodes[n].prio)
			last = spine[--depth];
		t->nodes[n].left = last;
		if (depth)
			t->nodes[spine[depth - 1]].right = n;
		spine[depth++] = n;
	}
	t->root = depth ? spine[0] : NIL;
	free(spine);
	return err;
}

/*
 * Whether adding rec changes what an address was named (format.md 4.10, as a merge would see
 * it): a symbol it replaces, one of its symbols that follows a symbol without a size (which
 * named every address up to the next one), or HIDDEN newly set.
 */
bool rep_ktable__add_changes(const struct rep_ktable *t, const struct cap_ksyms *rec)
{
	uint32_t j;

	if ((t->flags | rec->flags) != t->flags)
		return true;
	for (j = 0; j < rec->count; j++) {
		const struct cap_ksym *s = &rec->syms[j];
		uint32_t p = below(t, s->addr), q = at_or_above(t, s->addr);

		/* a symbol in its range: replaced */
		if (q != NIL && addr_of(t, q) - s->addr < s->size)
			return true;
		if (p == NIL)
			continue;
		/* the one before reaching into it: replaced */
		if (t->nodes[p].sym->size && s->addr - addr_of(t, p) < t->nodes[p].sym->size)
			return true;
		/* after a symbol without a size, unless another of rec's comes between */
		if (!t->nodes[p].sym->size && (!j || rec->syms[j - 1].addr < addr_of(t, p)))
			return true;
	}
	return false;
}

int rep_ktable__add(struct rep_ktable *t, const struct cap_ksyms *rec)
{
	uint32_t j, l, mid, r, p, n;
	int err = 0;

	t->flags |= rec->flags;
	for (j = 0; j < rec->count; j++) {
		const struct cap_ksym *s = &rec->syms[j];
		uint64_t last = s->addr + (s->size - 1);	/* size >= 1, no wrap (decoder) */

		/* the symbols of its range go, and one before it reaching into it */
		split(t, t->root, s->addr, &l, &r);
		if (last == UINT64_MAX) {
			mid = r;
			r = NIL;
		} else {
			split(t, r, last + 1, &mid, &r);
		}
		free_subtree(t, mid);
		p = l;
		while (p != NIL && t->nodes[p].right != NIL)
			p = t->nodes[p].right;
		if (p != NIL && t->nodes[p].sym->size &&
		    s->addr - addr_of(t, p) < t->nodes[p].sym->size) {
			/* the highest of l: split it off, the rest stays */
			split(t, l, addr_of(t, p), &l, &mid);
			free_subtree(t, mid);
		}
		n = node_new(t, s, &err);
		t->root = merge(t, merge(t, l, n), r);
		if (err)
			return err;
	}
	return 0;
}

uint32_t rep_ktable__count(const struct rep_ktable *t)
{
	return t->count;
}

uint32_t rep_ktable__flags(const struct rep_ktable *t)
{
	return t->flags;
}

static uint32_t copy_subtree(const struct rep_ktable *t, uint32_t n, struct cap_ksym *out,
			     uint32_t k)
{
	while (n != NIL) {
		k = copy_subtree(t, t->nodes[n].left, out, k);
		out[k++] = *t->nodes[n].sym;
		n = t->nodes[n].right;
	}
	return k;
}

void rep_ktable__copy(const struct rep_ktable *t, struct cap_ksym *out)
{
	copy_subtree(t, t->root, out, 0);
}
