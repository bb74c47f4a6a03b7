/* SPDX-License-Identifier: MIT */
/*
 * arena.c: bump allocator holding everything one decoded record points to, so
 * cap_record__free() is one walk over a few blocks instead of one free() per string (a kallsyms
 * record has hundreds of thousands of them). Every block is taken from the arena's budget
 * (capture.h) before it is allocated, and given back when the arena is freed.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>

#include "internal.h"

#define ARENA_BLOCK (64u << 10)
#define ARENA_MIN_BLOCK 256u

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	alignas(max_align_t) uint8_t data[];
};

struct cap_arena {
	struct arena_block *head;
	struct cap_budget *budget;
	size_t next_block;	/* size of the next small-request block */
	uint64_t taken;		/* from budget: the blocks and this struct */
};

/* n bytes of malloc(), taken from budget first. NULL + errno: EFBIG (over budget), ENOMEM. */
static void *budget_malloc(struct cap_budget *budget, size_t n)
{
	void *p;

	if (cap_budget__take(budget, n)) {
		errno = EFBIG;
		return NULL;
	}
	p = malloc(n);
	if (!p) {
		cap_budget__give(budget, n);
		errno = ENOMEM;
	}
	return p;
}

struct cap_arena *cap_arena__new(struct cap_budget *budget, size_t first_block)
{
	struct cap_arena *a = budget_malloc(budget, sizeof(*a));

	if (!a)
		return NULL;
	/*
	 * A small record gets a small first block: a file of many tiny chunks would otherwise
	 * hold 64 KiB per record (and take as much from the budget).
	 */
	*a = (struct cap_arena){
		.budget = budget,
		.taken = sizeof(*a),
		.next_block = first_block < ARENA_MIN_BLOCK ? ARENA_MIN_BLOCK :
			      first_block > ARENA_BLOCK ? ARENA_BLOCK : (first_block + 7) & ~(size_t)7,
	};
	return a;
}

void *cap_arena__alloc(struct cap_arena *a, size_t n)
{
	struct arena_block *b = a->head;
	size_t cap;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (!n)
		n = 8;
	if (!b || b->cap - b->used < n) {
		/* Big requests get a block of their own; callers bound n by the payload size. */
		cap = n > a->next_block ? n : a->next_block;
		b = budget_malloc(a->budget, sizeof(*b) + cap);
		if (!b)
			return NULL;
		a->taken += sizeof(*b) + cap;
		if (cap == a->next_block)
			a->next_block = ARENA_BLOCK;
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

void cap_arena__free(struct cap_arena *a)
{
	struct arena_block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	cap_budget__give(a->budget, a->taken);
	free(a);
}
