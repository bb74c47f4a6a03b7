/* SPDX-License-Identifier: MIT */
/*
 * arena.c: bump allocator holding everything one decoded record points to, so
 * cap_record__free() is one walk over a few blocks instead of one free() per string (a kallsyms
 * record has hundreds of thousands of them).
 */
#include <stdalign.h>
#include <stdlib.h>

#include "internal.h"

#define ARENA_BLOCK (64u << 10)

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	alignas(max_align_t) uint8_t data[];
};

struct cap_arena {
	struct arena_block *head;
};

struct cap_arena *cap_arena__new(void)
{
	return calloc(1, sizeof(struct cap_arena));
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
		cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
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
	free(a);
}
