/* SPDX-License-Identifier: MIT */
/*
 * stacks.c: the stacks a file holds (format.md 4.4, 4.0). Since 4.0 a stack is written once per
 * file: an INTERVAL or EVENTS record carries only the stacks its rows use that no earlier chunk
 * carried, and its rows refer to every stack of the file so far. An exec storm made a 3.0 file
 * of 10,851 interval parts repeat the whole stack tables in each (353 MB in 15 s); a file now
 * grows with the stacks it has not seen, not with intervals times stacks.
 *
 * The writer's side (struct cap_stack_set, one per kernel/user table and file): which stacks
 * the file holds, by content, and their numbers. The reader's side (struct cap_stacks): the
 * file's stacks in order, to look rows' references up.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* ---- the writer's set ------------------------------------------------------------------------ */

struct set_ent {
	uint64_t hash;
	size_t off;		/* of the first frame in set->ips */
	uint32_t nips, flags;
};

struct cap_stack_set {
	uint64_t *ips;		/* every stack's frames, one after the other */
	size_t nips, ips_cap;
	struct set_ent *v;	/* the file's stacks, by number - 1 */
	uint32_t n, cap;
	uint32_t *slots;	/* open addressing, linear probing: entry index + 1, 0 free */
	uint32_t nslots;	/* a power of two, at least twice n */
};

/* A stack's content: its flags and frames (the same frames truncated or not are two stacks). */
static uint64_t stack_hash(const struct cap_stack *st)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)st->nips << 32 | st->flags);

	for (uint32_t i = 0; i < st->nips; i++) {
		h ^= st->ips[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static bool ent_is(const struct cap_stack_set *s, const struct set_ent *e, uint64_t h,
		   const struct cap_stack *st)
{
	return e->hash == h && e->nips == st->nips && e->flags == st->flags &&
	       (!st->nips || !memcmp(s->ips + e->off, st->ips, st->nips * sizeof(*st->ips)));
}

/* The slot of the entry with this content, or the free slot where it would go. */
static uint32_t *find_slot(const struct cap_stack_set *s, uint64_t h, const struct cap_stack *st)
{
	uint32_t mask = s->nslots - 1, i = (uint32_t)(h ^ (h >> 32)) & mask;

	while (s->slots[i] && !ent_is(s, &s->v[s->slots[i] - 1], h, st))
		i = (i + 1) & mask;
	return &s->slots[i];
}

static void index_entries(struct cap_stack_set *s)
{
	uint32_t mask = s->nslots - 1;

	memset(s->slots, 0, s->nslots * sizeof(*s->slots));
	for (uint32_t k = 0; k < s->n; k++) {
		uint32_t i = (uint32_t)(s->v[k].hash ^ (s->v[k].hash >> 32)) & mask;

		while (s->slots[i])
			i = (i + 1) & mask;
		s->slots[i] = k + 1;
	}
}

struct cap_stack_set *cap_stack_set__new(void)
{
	struct cap_stack_set *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->nslots = 256;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	return s;
}

void cap_stack_set__free(struct cap_stack_set *s)
{
	if (!s)
		return;
	free(s->ips);
	free(s->v);
	free(s->slots);
	free(s);
}

uint32_t cap_stack_set__count(const struct cap_stack_set *s)
{
	return s->n;
}

/* Room for one more entry of nips frames. 0, -ENOMEM or -EOVERFLOW (2^32 - 1 stacks). */
static int reserve(struct cap_stack_set *s, uint32_t nips)
{
	if (s->n == UINT32_MAX - 1)
		return -EOVERFLOW;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? (s->cap < UINT32_MAX / 2 ? s->cap * 2 : UINT32_MAX - 1) : 64;
		struct set_ent *v = realloc(s->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	if (s->nips + nips > s->ips_cap) {
		size_t cap = s->ips_cap ? s->ips_cap : 1024;
		uint64_t *ips;

		while (cap < s->nips + nips)
			cap *= 2;
		ips = realloc(s->ips, cap * sizeof(*ips));
		if (!ips)
			return -ENOMEM;
		s->ips = ips;
		s->ips_cap = cap;
	}
	if ((uint64_t)(s->n + 1) * 2 > s->nslots) {
		uint32_t *slots = calloc((size_t)s->nslots * 2, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		free(s->slots);
		s->slots = slots;
		s->nslots *= 2;
		index_entries(s);
	}
	return 0;
}

int64_t cap_stack_set__ref(struct cap_stack_set *s, const struct cap_stack *st)
{
	uint64_t h = stack_hash(st);
	uint32_t *slot = find_slot(s, h, st);
	struct set_ent *e;
	int err;

	if (*slot)
		return *slot;
	err = reserve(s, st->nips);
	if (err)
		return err;
	slot = find_slot(s, h, st);	/* the slots may have moved */
	e = &s->v[s->n];
	e->hash = h;
	e->off = s->nips;
	e->nips = st->nips;
	e->flags = st->flags;
	if (st->nips)
		memcpy(s->ips + s->nips, st->ips, st->nips * sizeof(*st->ips));
	s->nips += st->nips;
	*slot = ++s->n;
	return s->n;
}

void cap_stack_set__get(const struct cap_stack_set *s, uint32_t ref, struct cap_stack *out)
{
	const struct set_ent *e = &s->v[ref - 1];

	out->flags = e->flags;
	out->nips = e->nips;
	out->ips = e->nips ? s->ips + e->off : NULL;
}

void cap_stack_set__truncate(struct cap_stack_set *s, uint32_t n)
{
	if (n >= s->n)
		return;
	s->nips = s->v[n].off;
	s->n = n;
	index_entries(s);
}

/* ---- the reader's table ---------------------------------------------------------------------- */

void cap_stacks__init(struct cap_stacks *s, uint16_t major, struct cap_budget *b)
{
	memset(s, 0, sizeof(*s));
	s->major = major;
	s->budget = b;
}

/* Room for more stacks on side u. 0, -EFBIG, -ENOMEM. */
static int grow(struct cap_stacks *s, int u, uint32_t more)
{
	uint64_t want = (uint64_t)s->n[u] + more, cap = s->cap[u] ? s->cap[u] : 64;
	struct cap_stack *v;

	if (want <= s->cap[u])
		return 0;
	if (want > UINT32_MAX)
		return -EBADMSG;	/* more stacks than a row can refer to */
	while (cap < want)
		cap *= 2;
	cap = cap > UINT32_MAX ? UINT32_MAX : cap;
	if (cap_budget__take(s->budget, (cap - s->cap[u]) * sizeof(*v)))
		return -EFBIG;
	v = realloc(s->v[u], cap * sizeof(*v));
	if (!v) {
		cap_budget__give(s->budget, (cap - s->cap[u]) * sizeof(*v));
		return -ENOMEM;
	}
	s->v[u] = v;
	s->cap[u] = (uint32_t)cap;
	return 0;
}

int cap_stacks__add(struct cap_stacks *s, const struct cap_interval *iv)
{
	int err;

	/* up to 3.x the decoder checked the rows against the record's own tables */
	if (s->major < 4)
		return 0;
	err = grow(s, 0, iv->nkstacks);
	if (!err)
		err = grow(s, 1, iv->nustacks);
	if (err)
		return err;
	for (uint32_t i = 0; i < iv->nrows; i++)
		if (iv->rows[i].kstack > s->n[0] + iv->nkstacks ||
		    iv->rows[i].ustack > s->n[1] + iv->nustacks)
			return -EBADMSG;
	if (iv->nkstacks)
		memcpy(s->v[0] + s->n[0], iv->kstacks, iv->nkstacks * sizeof(*iv->kstacks));
	if (iv->nustacks)
		memcpy(s->v[1] + s->n[1], iv->ustacks, iv->nustacks * sizeof(*iv->ustacks));
	s->n[0] += iv->nkstacks;
	s->n[1] += iv->nustacks;
	return 0;
}

const struct cap_stack *cap_stacks__get(const struct cap_stacks *s, const struct cap_interval *iv,
					bool user, uint32_t ref)
{
	struct cap_interval view;

	cap_stacks__view(s, iv, &view);
	if (ref == CAP_NO_STACK || ref > (user ? view.nustacks : view.nkstacks))
		return NULL;
	return &(user ? view.ustacks : view.kstacks)[ref - 1];
}

void cap_stacks__view(const struct cap_stacks *s, const struct cap_interval *iv,
		      struct cap_interval *out)
{
	*out = *iv;
	if (!s || s->major < 4)
		return;
	out->kstacks = s->v[0];
	out->nkstacks = s->n[0];
	out->ustacks = s->v[1];
	out->nustacks = s->n[1];
}

void cap_stacks__release(struct cap_stacks *s)
{
	for (int u = 0; u < 2; u++) {
		cap_budget__give(s->budget, (uint64_t)s->cap[u] * sizeof(*s->v[u]));
		free(s->v[u]);
		s->v[u] = NULL;
		s->n[u] = s->cap[u] = 0;
	}
}
