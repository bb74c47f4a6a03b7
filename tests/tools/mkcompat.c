// SPDX-License-Identifier: MIT
/*
 * mkcompat: writes the compat sample capture of format 1.1 (docs/format.md 5) from the frozen
 * records of tests/format/samples_v1_1.h, followed by one optional chunk of an unknown type
 * (1000) that every reader must skip.
 *
 *   mkcompat FILE
 *
 * tests/format/compat/v1.1.stk was written by it once, when 1.1 was released, and is committed:
 * never regenerate it (test_compat proves that today's reader still reads the released bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../format/samples_v1_1.h"

int main(int argc, char **argv)
{
	struct cap_record recs[SAMPLE11_NRECORDS];
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
	sample11_records(recs);
	for (i = 0; i < SAMPLE11_NRECORDS && !err; i++)
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
