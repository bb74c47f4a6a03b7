/* SPDX-License-Identifier: MIT */
/*
 * htab.h: the two containers every stage of stkreport leans on: an open-addressing hash index
 * (hash -> 32-bit value, equality decided by the caller) and a string interner built on it.
 * Both grow by doubling, so inserts are amortised O(1); nothing here is thread safe. Both take
 * what they hold from a memory budget when given one (struct rep_charge).
 */
#ifndef REP_HTAB_H
#define REP_HTAB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stk/capture.h>

/*
 * Bytes something that grows with the input keeps, taken from a memory budget (capture.h, the
 * run's --max-memory) before they are allocated and given back together by __clear. A zeroed
 * charge (budget NULL) has no limit.
 */
struct rep_charge {
	struct cap_budget *budget;
	uint64_t bytes;
};

/* Take n bytes: 0, or -EFBIG (nothing taken) when the budget has not that much left. */
static inline int rep_charge__take(struct rep_charge *c, uint64_t n)
{
	if (cap_budget__take(c->budget, n))
		return -EFBIG;
	c->bytes += n;
	return 0;
}

/* Give back every byte taken; the budget stays set. */
static inline void rep_charge__clear(struct rep_charge *c)
{
	cap_budget__give(c->budget, c->bytes);
	c->bytes = 0;
}

/*
 * Index of values by hash. The table stores only (hash, value); the caller keeps the keys (in an
 * array indexed by value) and answers "is value v the key I look for" through eq().
 */
struct rep_htab {
	uint64_t *hashes;	/* 0 = empty slot (hashes are forced non-zero) */
	uint32_t *vals;
	size_t cap;		/* power of two, or 0 */
	size_t n;
	struct rep_charge charge;	/* set charge.budget to count the table in a budget */
	uint64_t seed;		/* random, mixed into every slot's place (htab.c) */
};

typedef bool (*rep_htab_eq_fn)(const void *ctx, uint32_t val);

/* Find a value whose hash is h and for which eq(ctx, value) holds. Returns true and sets *val. */
bool rep_htab__find(const struct rep_htab *t, uint64_t h, rep_htab_eq_fn eq, const void *ctx,
		    uint32_t *val);
/* Add (h, val); the caller has checked it is absent. Returns 0, -EFBIG (over its budget) or
 * -ENOMEM. */
int rep_htab__insert(struct rep_htab *t, uint64_t h, uint32_t val);
/* Empty the table and give its bytes back (its budget stays set). */
void rep_htab__clear(struct rep_htab *t);

/* 64-bit hash of bytes, continuing from seed (use 0 to start). */
uint64_t rep_hash_bytes(uint64_t seed, const void *buf, size_t len);
uint64_t rep_hash_u64(uint64_t seed, uint64_t v);

/*
 * Interned strings: equal strings get the same id (0, 1, 2, ...), kept until __clear. To count
 * them in a budget, set charge.budget (the strings and the array) and index.charge.budget.
 */
struct rep_strtab {
	struct rep_htab index;
	char **strs;		/* id -> string, each malloc'ed */
	uint32_t n, cap;
	struct rep_charge charge;
};

/* Count t (strings and index) in budget b from now on. */
static inline void rep_strtab__set_budget(struct rep_strtab *t, struct cap_budget *b)
{
	t->charge.budget = b;
	t->index.charge.budget = b;
}

/* Id of s, adding a copy when new. Returns the id, -EFBIG (over its budget) or -ENOMEM. */
int64_t rep_strtab__intern(struct rep_strtab *t, const char *s);
static inline const char *rep_strtab__str(const struct rep_strtab *t, uint32_t id)
{
	return t->strs[id];
}
void rep_strtab__clear(struct rep_strtab *t);

#endif /* REP_HTAB_H */
