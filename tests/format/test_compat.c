/* SPDX-License-Identifier: MIT */
/*
 * test_compat: captures written by released versions stay readable forever. Each file in
 * tests/format/compat/ was written once from a frozen sample set and is committed; this test
 * reads it with today's reader and compares every field.
 *
 *   test_compat                 check tests/format/compat/v1.0.stk (run from the repo root)
 *   test_compat --write FILE    write the 1.0 sample capture (done once, when 1.0 was released)
 */
#include "helpers.h"
#include "samples.h"

#define V1_0_PATH "tests/format/compat/v1.0.stk"

static int write_sample(const char *path)
{
	struct cap_record recs[SAMPLE_NRECORDS];
	struct cap_writer *w = cap_writer__open(path);
	int i, err = 0;

	if (!w) {
		fprintf(stderr, "test_compat: %s: %s\n", path, strerror(errno));
		return 1;
	}
	sample_records(recs);
	for (i = 0; i < SAMPLE_NRECORDS && !err; i++)
		err = cap_writer__put(w, &recs[i]);
	/* One optional chunk of a type 1.0 does not know: later readers must skip it too. */
	if (!err)
		err = cap_writer__put_raw(w, 1000, 0, "reserved", 8);
	if (!err)
		err = cap_writer__finish(w);
	cap_writer__close(w);
	if (err)
		fprintf(stderr, "test_compat: %s: %s\n", path, strerror(-err));
	return !!err;
}

int main(int argc, char **argv)
{
	struct cap_record recs[SAMPLE_NRECORDS], *got;
	struct cap_reader *r;
	struct cap_chunk ch;
	uint16_t major, minor;
	char name[64], why[128];
	int i, ret;

	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_sample(argv[2]);
	sample_records(recs);
	r = cap_reader__open(V1_0_PATH);
	if (!T_CHECK("compat 1.0 opens", r, "%s: %s", V1_0_PATH, strerror(errno)))
		T_EXIT();
	cap_reader__version(r, &major, &minor);
	T_CHECK("compat 1.0 version", major == 1 && minor == 0, "%u.%u", major, minor);
	for (i = 0; i < SAMPLE_NRECORDS; i++) {
		snprintf(name, sizeof(name), "compat 1.0 record %d", i);
		ret = cap_reader__next(r, &ch);
		if (ret != 1) {
			T_FAIL(name, "next returned %d", ret);
			break;
		}
		ret = cap_record__decode(&ch, &got);
		if (ret) {
			T_FAIL(name, "decode: %s", strerror(-ret));
			continue;
		}
		T_CHECK(name, ch.index == (uint32_t)i && record_eq(&recs[i], got, why, sizeof(why)),
			"chunk %u: %s", ch.index, why);
		cap_record__free(got);
	}
	/* Spot checks written out, in case the sample set were ever edited by mistake. */
	T_EQ_STR("compat 1.0 literal: meta kernel", "6.1.0-18-amd64",
		 cap_meta_get(&recs[0].meta, "kernel"));
	T_EQ_U64("compat 1.0 literal: end events", 0x100000003e8ull, recs[5].end.events);
	T_EQ_U64("compat 1.0 literal: row 1 count", 0xffffffffffull,
		 recs[3].interval.rows[1].count);
	T_EQ_INT("compat 1.0 clean end (unknown optional chunk skipped)", 0,
		 cap_reader__next(r, &ch));
	T_EQ_INT("compat 1.0 last chunk returned is 5", 5, cap_reader__chunk_index(r));
	cap_reader__close(r);
	T_EXIT();
}
