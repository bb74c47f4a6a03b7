// SPDX-License-Identifier: MIT
/*
 * rep_damage.c: stkreport on damaged copies of a golden capture: every prefix (a recorder killed
 * at any byte) and single-byte flips. Each must load (or be refused cleanly), never crash, and
 * every emitter must run on what was read, and --diff, --svg, --pprof and --sql on each
 * different content. Run it under SAN=address,undefined too.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../report/report.h"
#include "../test.h"

#define INPUT "tests/golden/count/input.stk"

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void test_prefixes(const uint8_t *buf, size_t len, FILE *sink)
{
	uint64_t last_events = 0;
	uint32_t last_nrecs = UINT32_MAX;
	size_t cut;
	int bad = 0, regress = 0, crashed = 0;

	for (cut = 0; cut <= len; cut++) {
		struct rep_capture *c = rep_capture__load_mem(buf, cut, NULL);
		unsigned int what = REP_FUZZ_EMITTERS;

		if (!c) {
			/* only a file shorter than its header is refused */
			if (cut >= 16)
				bad++;
			continue;
		}
		if (cut < len && c->how != REP_END_TRUNCATED && c->how != REP_END_UNCLOSED)
			bad++;
		if (c->events < last_events)
			regress++;
		last_events = c->events;
		/*
		 * The other outputs (SQL takes milliseconds) where a new record came in: cuts
		 * inside one chunk differ in how reading ended and nothing else.
		 */
		if (c->nrecs != last_nrecs)
			what = REP_FUZZ_ALL;
		last_nrecs = c->nrecs;
		rep_capture__free(c);
		if (rep_fuzz_one(buf, cut, sink, what))
			crashed++;
	}
	T_EQ_INT("test_rep_damage_prefix_status", 0, bad);
	T_EQ_INT("test_rep_damage_prefix_events_grow", 0, regress);
	T_EQ_INT("test_rep_damage_prefix_emitters", 0, crashed);
	T_EQ_U64("test_rep_damage_full_events", 43, last_events);
}

static void test_flips(uint8_t *buf, size_t len, FILE *sink)
{
	unsigned int seed = 12345, i, errors = 0, failed = 0;

	for (i = 0; i < 3000; i++) {
		size_t pos = rand_r(&seed) % len;
		uint8_t bit = 1u << (rand_r(&seed) % 8);
		struct rep_capture *c;

		buf[pos] ^= bit;
		c = rep_capture__load_mem(buf, len, NULL);
		/* a flip is always noticed: header (refused) or a chunk (checksum) */
		if (c && c->how != REP_END_ERROR && c->how != REP_END_TRUNCATED)
			errors++;
		rep_capture__free(c);
		/* what a flip leaves is mostly a prefix cut at a chunk's end, as above */
		if (rep_fuzz_one(buf, len, sink, i % 32 ? REP_FUZZ_EMITTERS : REP_FUZZ_ALL))
			failed++;
		buf[pos] ^= bit;
	}
	T_EQ_INT("test_rep_damage_flips_detected", 0, errors);
	T_EQ_INT("test_rep_damage_flips_emitters", 0, failed);
}

int main(void)
{
	FILE *sink = fopen("/dev/null", "w");
	size_t len = 0;
	uint8_t *buf = slurp(INPUT, &len);

	if (!T_CHECK("test_rep_damage_setup", buf && sink && len > 100, "cannot read %s", INPUT))
		return 1;
	test_prefixes(buf, len, sink);
	test_flips(buf, len, sink);
	free(buf);
	fclose(sink);
	T_EXIT();
}
