// SPDX-License-Identifier: MIT
/*
 * mkcompat: writes the compat sample capture of the format version it is built at (docs/format.md
 * 5), from that version's frozen sample records (tests/format/samples_v4_2.h for 4.2), followed
 * by one optional chunk of an unknown type (1000) that every reader must skip.
 *
 *   mkcompat FILE
 *
 * Each tests/format/compat/vMAJOR.MINOR.stk it wrote (v1.1.stk from samples_v1_1.h when 1.1 was
 * released, v2.0.stk for 2.0, v2.1.stk for 2.1, v2.2.stk for 2.2, v3.0.stk for 3.0, v4.0.stk for
 * 4.0, v4.1.stk for 4.1, v4.2.stk for 4.2) is committed: never regenerate one (test_compat
 * proves that today's reader still reads the released bytes). A new version points it at its own samples.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../format/samples_v4_2.h"

int main(int argc, char **argv)
{
	struct cap_record recs[SAMPLE42_NRECORDS];
	struct cap_writer *w;
	int i, err = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mkcompat FILE\n");
		return 2;
	}
	w = cap_writer__open(argv[1]);
	if (!w) {
		fprintf(stderr, "mkcompat: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	sample42_records(recs);
	for (i = 0; i < SAMPLE42_NRECORDS && !err; i++)
		err = cap_writer__put(w, &recs[i]);
	if (!err)
		err = cap_writer__put_raw(w, 1000, 0, "reserved", 8);
	if (!err)
		err = cap_writer__finish(w);
	cap_writer__close(w);
	if (err)
		fprintf(stderr, "mkcompat: %s: record %d: %s\n", argv[1], i - 1, strerror(-err));
	return err ? 1 : 0;
}
