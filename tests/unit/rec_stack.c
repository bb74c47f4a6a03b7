// SPDX-License-Identifier: MIT
/* Unit tests of record/write/snapshot.c's stack deduplication. */
#include <stdlib.h>

#include "../test.h"
#include "../../record/rec.h"

static void test_dedupe(void)
{
	struct rec_stack_table *t = rec_stack_table__new();
	uint64_t s1[] = { 0xa, 0xb, 0xc }, s2[] = { 0xa, 0xb, 0xd }, s1copy[] = { 0xa, 0xb, 0xc };
	struct cap_stack *out = NULL;
	uint32_t n;

	(void)T_EQ_INT("test_rec_dedupe_first", 1, rec_stack_table__add(t, s1, 3, 0));
	(void)T_EQ_INT("test_rec_dedupe_second", 2, rec_stack_table__add(t, s2, 3, 0));
	(void)T_EQ_INT("test_rec_dedupe_same_content", 1, rec_stack_table__add(t, s1copy, 3, 0));
	(void)T_EQ_INT("test_rec_dedupe_prefix_differs", 3, rec_stack_table__add(t, s1, 2, 0));
	(void)T_EQ_INT("test_rec_dedupe_flags_differ", 4,
		 rec_stack_table__add(t, s1, 3, CAP_STACK_F_TRUNCATED));
	for (int i = 0; i < 1000; i++) {
		uint64_t s[2] = { 0x1000 + i, 7 };

		rec_stack_table__add(t, s, 2, 0);
	}
	(void)T_EQ_INT("test_rec_dedupe_after_growth", 2, rec_stack_table__add(t, s2, 3, 0));
	n = rec_stack_table__take(t, &out);
	(void)T_EQ_INT("test_rec_dedupe_take_count", 1004, n);
	(void)T_EQ_U64("test_rec_dedupe_take_order", 0xd, n > 1 ? out[1].ips[2] : 0);
	(void)T_EQ_INT("test_rec_dedupe_take_flags", CAP_STACK_F_TRUNCATED, n > 3 ? out[3].flags : 0);
	(void)T_EQ_INT("test_rec_dedupe_empty_after_take", 1, rec_stack_table__add(t, s1, 3, 0));
	for (uint32_t i = 0; i < n; i++)
		free(out[i].ips);
	free(out);
	rec_stack_table__free(t);
}

int main(void)
{
	test_dedupe();
	T_EXIT();
}
