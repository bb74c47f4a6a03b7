/* SPDX-License-Identifier: MIT */
/*
 * budget.c: the memory budget of a reader of hostile input (capture.h, format.md 2). Plain
 * counting: the budget sees what its users take and give back, not what malloc() does.
 */
#include <errno.h>

#include "internal.h"

int cap_budget__take(struct cap_budget *b, uint64_t n)
{
	if (!b)
		return 0;
	/* written so that a hostile n cannot wrap the sum */
	if (b->limit && (b->used > b->limit || n > b->limit - b->used)) {
		b->refused++;
		return -EFBIG;
	}
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
	return 0;
}

void cap_budget__give(struct cap_budget *b, uint64_t n)
{
	if (b)
		b->used -= n < b->used ? n : b->used;
}
