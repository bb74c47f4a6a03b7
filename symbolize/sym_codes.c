// SPDX-License-Identifier: MIT
/*
 * sym_codes.c: interpreter frames (format.md 4.11) to names, from the capture's CODES records
 * alone: no Python, no process, no file is needed where the report runs. A frame word holds a
 * code id and an instruction offset; the id's entry holds the qualified name, the file name,
 * the first line and the line runs that turn the offset into the executing line.
 */
#include <stdlib.h>

#include "stk/symbolize.h"

static int cmp_code_id(const void *a, const void *b)
{
	const struct cap_code *x = *(const struct cap_code *const *)a;
	const struct cap_code *y = *(const struct cap_code *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void sym_codes_sort(const struct cap_code **codes, uint32_t n)
{
	if (n > 1)	/* a capture without CODES has no array: qsort() takes no NULL */
		qsort(codes, n, sizeof(*codes), cmp_code_id);
}

const struct cap_code *sym_code_find(const struct cap_code *const *codes, uint32_t n, uint32_t id)
{
	uint32_t lo = 0, hi = n;

	/* the first entry of an id wins: a capture writes each once */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (codes[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && codes[lo]->id == id ? codes[lo] : NULL;
}

uint32_t sym_code_line(const struct cap_code *c, uint32_t off)
{
	uint32_t lo = 0, hi = c->nlines;

	if (off == CAP_CODE_OFF_NONE || !c->nlines)
		return c->firstline;
	/* the last run starting at or before off */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->lines[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? c->lines[lo - 1].line : c->firstline;
}
