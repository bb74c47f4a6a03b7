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
 *   mkhostile ksyms-add OUT.stk MIB NADD [every|replace|one]
 *                                         a KSYMS table of MIB MiB of zeros, then NADD KSYMS_ADD
 *                                         records of one symbol (every: an interval using the
 *                                         table after each; replace: each replaces the last;
 *                                         one: the control, all in one record)
 *   mkhostile long-name OUT.stk KIB NSTACKS DEPTH object|jit|kernel [mangled]
 *                                         a symbol name of KIB KiB, hit at NSTACKS x DEPTH
 *                                         addresses (user stacks, or kernel ones with kernel)
 *   mkhostile dwarf OUT.stk MIB NADDR [dies]
 *                                         an embedded object with MIB MiB of zeros in its
 *                                         compressed .debug_info (dies: a unit of MIB Mi
 *                                         childless entries), hit at NADDR addresses
 *   mkhostile perfmap OUT.stk NSYMS same|spread NADDR
 *                                         a perf map of NSYMS entries (all at one address, or
 *                                         each after the last), NADDR of its addresses hit
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"

static int usage(void)
{
	fprintf(stderr, "usage: mkhostile ksyms|rows OUT.stk CHUNKS MIB\n"
			"       mkhostile objects OUT.stk NOBJ MIB [debugdata]\n"
			"       mkhostile ksyms-add OUT.stk MIB NADD [every|replace|one]\n"
			"       mkhostile long-name OUT.stk KIB NSTACKS DEPTH object|jit|kernel "
			"[mangled]\n"
			"       mkhostile dwarf OUT.stk MIB NADDR [dies]\n"
			"       mkhostile perfmap OUT.stk NSYMS same|spread NADDR\n");
	return 2;
}

static int out_of_range(void)
{
	fprintf(stderr, "mkhostile: out of range\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "";
	struct cap_writer *w;
	unsigned long a, b;
	int err;

	if (argc < 5)
		return usage();
	a = strtoul(argv[3], NULL, 10);
	b = strtoul(argv[4], NULL, 10);
	/* check the arguments before the file is made */
	if (!strcmp(kind, "ksyms") || !strcmp(kind, "rows")) {
		/* a bomb's chunk holds 1 MiB at least and at most what a chunk may */
		if (a > 100000 || b < 1 || b > CAP_MAX_CHUNK_RAW >> 20)
			return out_of_range();
	} else if (!strcmp(kind, "objects")) {
		if (a > 100000 || b > 4096)
			return out_of_range();
	} else if (!strcmp(kind, "ksyms-add")) {
		if (a > CAP_MAX_CHUNK_RAW >> 20 || b > 10000000)
			return out_of_range();
	} else if (!strcmp(kind, "long-name")) {
		if (argc < 7 || !strchr("ojk", argv[6][0]))
			return usage();
		if (a > 60 * 1024 || b > 100000 || strtoul(argv[5], NULL, 10) > CAP_MAX_STACK_DEPTH)
			return out_of_range();
	} else if (!strcmp(kind, "dwarf")) {
		if (b > 65536 || a > 4096)
			return out_of_range();
	} else if (!strcmp(kind, "perfmap")) {
		if (argc < 6 || (strcmp(argv[4], "same") && strcmp(argv[4], "spread")))
			return usage();
		if (a > 1000000000 || strtoul(argv[5], NULL, 10) > CAP_MAX_STACK_DEPTH)
			return out_of_range();
	} else {
		return usage();
	}
	w = cap_writer__open(argv[2]);
	if (!w) {
		fprintf(stderr, "mkhostile: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (!strcmp(kind, "objects")) {
		err = hostile_objects(w, a, (uint64_t)b << 20,
				      argc > 5 && !strcmp(argv[5], "debugdata") ? MKELF_DEBUGDATA : 0);
	} else if (!strcmp(kind, "ksyms-add")) {
		const char *mode = argc > 5 ? argv[5] : "";

		err = hostile_ksyms_adds(w, (size_t)a << 20, b,
					 !strcmp(mode, "every") ? HOSTILE_KSYMS_EVERY :
					 !strcmp(mode, "replace") ? HOSTILE_KSYMS_EVERY |
								    HOSTILE_KSYMS_REPLACE :
					 !strcmp(mode, "one") ? HOSTILE_KSYMS_ONE : 0);
	} else if (!strcmp(kind, "long-name")) {
		err = hostile_long_name(w, (size_t)a << 10, b, strtoul(argv[5], NULL, 10),
					argv[6][0], argc > 7 && !strcmp(argv[7], "mangled"));
	} else if (!strcmp(kind, "dwarf")) {
		err = hostile_dwarf(w, (uint64_t)a << 20, b,
				    argc > 5 && !strcmp(argv[5], "dies") ? MKELF_DIES : 0);
	} else if (!strcmp(kind, "perfmap")) {
		err = hostile_perfmap(w, a, !strcmp(argv[4], "same"), strtoul(argv[5], NULL, 10));
	} else {
		err = hostile_meta(w);
		if (!err && !strcmp(kind, "ksyms"))
			err = hostile_ksyms_bomb(w, a, (size_t)b << 20);
		else if (!err)
			err = hostile_rows_bomb(w, a, (size_t)b << 20);
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
