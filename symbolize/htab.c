// SPDX-License-Identifier: MIT
/* htab.c: open-addressing hash index and string interner (see htab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "stk/htab.h"

uint64_t rep_hash_u64(uint64_t seed, uint64_t v)
{
	/* splitmix64 finaliser over seed ^ v: cheap, every input bit reaches every output bit */
	uint64_t x = seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t rep_hash_bytes(uint64_t seed, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;	/* FNV-1a, then a final mix */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return rep_hash_u64(seed, h);
}

static uint64_t nonzero(uint64_t h)
{
	return h ? h : 1;
}

/*
 * The first slot of hash h: the hash mixed with the table's random seed. The callers' hashes are
 * of the input (pids, addresses, names): unkeyed, a capture could pick keys whose hashes share
 * their low bits, one cluster that every insert and lookup walks (a hash of u64 keys is
 * inverted in a few operations). Keyed, which keys collide is not known before the run.
 */
static size_t first_slot(uint64_t seed, uint64_t h, size_t mask)
{
	return rep_hash_u64(seed, h) & mask;
}

bool rep_htab__find(const struct rep_htab *t, uint64_t h, rep_htab_eq_fn eq, const void *ctx,
		    uint32_t *val)
{
	size_t mask, i;

	if (!t->cap)
		return false;
	h = nonzero(h);
	mask = t->cap - 1;
	for (i = first_slot(t->seed, h, mask); t->hashes[i]; i = (i + 1) & mask) {
		if (t->hashes[i] == h && eq(ctx, t->vals[i])) {
			*val = t->vals[i];
			return true;
		}
	}
	return false;
}

static void put(uint64_t seed, uint64_t *hashes, uint32_t *vals, size_t cap, uint64_t h,
		uint32_t val)
{
	size_t mask = cap - 1, i;

	for (i = first_slot(seed, h, mask); hashes[i]; i = (i + 1) & mask)
		;
	hashes[i] = h;
	vals[i] = val;
}

static int grow(struct rep_htab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64, i;
	uint64_t *hashes, more = (cap - t->cap) * (sizeof(*hashes) + sizeof(*t->vals));
	uint32_t *vals;

	if (rep_charge__take(&t->charge, more))
		return -EFBIG;
	hashes = calloc(cap, sizeof(*hashes));
	vals = calloc(cap, sizeof(*vals));
	if (!hashes || !vals) {
		free(hashes);
		free(vals);
		return -ENOMEM;
	}
	if (!t->seed && getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) != sizeof(t->seed))
		t->seed = (uintptr_t)hashes;	/* no entropy yet: the heap's place, at least */
	for (i = 0; i < t->cap; i++)
		if (t->hashes[i])
			put(t->seed, hashes, vals, cap, t->hashes[i], t->vals[i]);
	free(t->hashes);
	free(t->vals);
	t->hashes = hashes;
	t->vals = vals;
	t->cap = cap;
	return 0;
}

int rep_htab__insert(struct rep_htab *t, uint64_t h, uint32_t val)
{
	int err;

	/* keep the load under 1/2: linear probing degrades quickly above that */
	if ((t->n + 1) * 2 > t->cap) {
		err = grow(t);
		if (err)
			return err;
	}
	put(t->seed, t->hashes, t->vals, t->cap, nonzero(h), val);
	t->n++;
	return 0;
}

void rep_htab__clear(struct rep_htab *t)
{
	struct cap_budget *b = t->charge.budget;
	uint64_t seed = t->seed;

	free(t->hashes);
	free(t->vals);
	rep_charge__clear(&t->charge);
	memset(t, 0, sizeof(*t));
	t->charge.budget = b;
	t->seed = seed;	/* one getrandom() for a table cleared and filled again */
}

struct str_key {
	const struct rep_strtab *t;
	const char *s;
};

static bool str_eq(const void *ctx, uint32_t val)
{
	const struct str_key *k = ctx;

	return !strcmp(k->t->strs[val], k->s);
}

int64_t rep_strtab__intern(struct rep_strtab *t, const char *s)
{
	struct str_key key = { t, s };
	size_t len = strlen(s);
	uint64_t h = rep_hash_bytes(0, s, len);
	uint32_t id;
	char *copy;
	int err;

	if (rep_htab__find(&t->index, h, str_eq, &key, &id))
		return id;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **strs;

		if (rep_charge__take(&t->charge, (cap - t->cap) * sizeof(*strs)))
			return -EFBIG;
		strs = realloc(t->strs, cap * sizeof(*strs));
		if (!strs)
			return -ENOMEM;
		t->strs = strs;
		t->cap = cap;
	}
	/* malloc rounds up to 16 bytes, with 8 of its own */
	if (rep_charge__take(&t->charge, ((len + 1 + 8 + 15) & ~(size_t)15)))
		return -EFBIG;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	err = rep_htab__insert(&t->index, h, t->n);
	if (err) {
		free(copy);
		return err;
	}
	t->strs[t->n] = copy;
	return t->n++;
}

void rep_strtab__clear(struct rep_strtab *t)
{
	struct cap_budget *b = t->charge.budget, *ib = t->index.charge.budget;
	uint32_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	rep_htab__clear(&t->index);
	rep_charge__clear(&t->charge);
	memset(t, 0, sizeof(*t));
	t->charge.budget = b;
	t->index.charge.budget = ib;
}
