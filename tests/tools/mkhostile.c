// SPDX-License-Identifier: MIT
/*
 * mkhostile.c: captures made to hurt a reader (tests/check/hostile.sh), all valid as far as
 * format.md goes (tests/tools/hostile.h writes them):
 *
 *   mkhostile ksyms OUT.stk CHUNKS MIB    an lz4 bomb: CHUNKS KSYMS chunks of MIB MiB of zeros
 *                                         each (MIB * 65536 empty symbols at address 0)
 *   mkhostile rows OUT.stk CHUNKS MIB     the same with INTERVAL chunks holding the largest row
 *                                         count MIB MiB allow (rows of zeros)
 *   mkhostile objects OUT.stk NOBJ MIB [debugdata]
 *                                         NOBJ embedded whole objects, each with a
 *                                         zlib-compressed .debug_info of MIB MiB of zeros (with
 *                                         debugdata: also an xz .gnu_debugdata of as many, and
 *                                         only .dynsym), hit once each by one interval
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"

int main(int argc, char **argv)
{
	struct cap_writer *w;
	unsigned long n, mib;
	bool objects;
	int err;

	if (argc < 5 || (strcmp(argv[1], "ksyms") && strcmp(argv[1], "rows") &&
			 strcmp(argv[1], "objects"))) {
		fprintf(stderr, "usage: mkhostile ksyms|rows OUT.stk CHUNKS MIB\n"
				"       mkhostile objects OUT.stk NOBJ MIB [debugdata]\n");
		return 2;
	}
	objects = !strcmp(argv[1], "objects");
	n = strtoul(argv[3], NULL, 10);
	mib = strtoul(argv[4], NULL, 10);
	/* a bomb's chunk holds 1 MiB at least and at most what a chunk may */
	if (n > 100000 || (objects ? mib > 4096 : mib < 1 || mib > CAP_MAX_CHUNK_RAW >> 20)) {
		fprintf(stderr, "mkhostile: out of range\n");
		return 2;
	}
	w = cap_writer__open(argv[2]);
	if (!w) {
		fprintf(stderr, "mkhostile: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (objects) {
		err = hostile_objects(w, n, (uint64_t)mib << 20,
				      argc > 5 && !strcmp(argv[5], "debugdata") ? MKELF_DEBUGDATA : 0);
	} else {
		err = hostile_meta(w);
		if (!err && !strcmp(argv[1], "ksyms"))
			err = hostile_ksyms_bomb(w, n, (size_t)mib << 20);
		else if (!err)
			err = hostile_rows_bomb(w, n, (size_t)mib << 20);
	}
	if (!err)
		err = cap_writer__finish(w);
	cap_writer__close(w);
	if (err) {
		fprintf(stderr, "mkhostile: %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	return 0;
}
