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
 *   mkhostile long-name OUT.stk KIB NSTACKS DEPTH object|jit|kernel|path [mangled]
 *                                         a symbol name of KIB KiB, hit at NSTACKS x DEPTH
 *                                         addresses (user stacks, or kernel ones with kernel;
 *                                         path: the object's path is that long)
 *   mkhostile dwarf OUT.stk MIB NADDR [dies|inlines]
 *                                         an embedded object with MIB MiB of zeros in its
 *                                         compressed .debug_info (dies: a unit of MIB Mi
 *                                         childless entries; inlines: every address in MIB
 *                                         nested inlined functions), hit at NADDR addresses
 *   mkhostile perfmap OUT.stk NSYMS same|spread NADDR
 *                                         a perf map of NSYMS entries (all at one address, or
 *                                         each after the last), NADDR of its addresses hit
 *   mkhostile paths OUT.stk NSYMS NPROCS [control]
 *                                         an object of NSYMS symbols in an OBJECTS record,
 *                                         mapped by NPROCS processes each at another path
 *                                         (control: at one path), each hitting it once
 *   mkhostile pids OUT.stk NPIDS NROWS [control]
 *                                         NPIDS processes whose pids' unkeyed hashes share
 *                                         their low 16 bits (control: pids 1, 2, 3...), and an
 *                                         interval of NROWS rows going round them
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"
#include <stk/htab.h>

/*
 * n pids whose hashes as stkreport's pid table computed them without a key (rep_hash_u64(0,
 * pid)) share their low 16 bits: all in one cluster of that table up to 32768 processes. A
 * search of the first pids from 1, 65536 tries a hit.
 */
static void colliding_pids(uint32_t *pids, uint32_t n)
{
	uint32_t pid = 1, k = 0;

	while (k < n) {
		if (!(rep_hash_u64(0, pid) & 0xffff))
			pids[k++] = pid;
		pid++;
	}
}

/* format.md 4.8, 4.3, 4.4: the object, the processes, one row each. */
static int hostile_paths(struct cap_writer *w, uint32_t nsyms, uint32_t nprocs, bool control)
{
	struct cap_symbol *syms = calloc(nsyms + 1, sizeof(*syms));
	struct cap_process *procs = calloc(nprocs + 1, sizeof(*procs));
	struct cap_mapping *maps = calloc(nprocs + 1, sizeof(*maps));
	struct cap_stack *st = calloc(nprocs + 1, sizeof(*st));
	struct cap_row *rows = calloc(nprocs + 1, sizeof(*rows));
	char (*paths)[32] = calloc(nprocs + 1, sizeof(*paths));
	struct cap_segment seg = { 0, 0, 16ull * nsyms + 0x1000, 16ull * nsyms + 0x1000 };
	struct cap_object o = { .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20, .path = "/p/0",
				.debuglink = "", .nsegs = 1, .segs = &seg };
	uint64_t ip = HOSTILE_BASE + 0x104;
	struct cap_record rec;
	uint32_t i;
	int err;

	if (!syms || !procs || !maps || !st || !rows || !paths) {
		err = -ENOMEM;
		goto out;
	}
	memset(o.build_id, 0x70, 20);
	for (i = 0; i < nsyms; i++)
		syms[i] = (struct cap_symbol){ 16ull * i, 16, "f" };
	o.nsyms = nsyms;
	o.syms = syms;
	for (i = 0; i < nprocs; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/p/%u", control ? 0 : i);
		maps[i] = (struct cap_mapping){ .start = HOSTILE_BASE, .end = HOSTILE_BASE + seg.memsz,
						.kind = CAP_MAP_FILE, .build_id_len = 20,
						.path = paths[i] };
		memcpy(maps[i].build_id, o.build_id, 20);
		procs[i] = (struct cap_process){ i + 1, 0, 5000, "p", "", 1, &maps[i] };
		st[i] = (struct cap_stack){ 0, 1, &ip };
		rows[i] = (struct cap_row){ .pid = i + 1, .tid = i + 1, .comm = "p", .ustack = i + 1,
					    .count = 1 };
	}
	err = hostile_meta(w);
	rec = (struct cap_record){ .type = CAP_CHUNK_OBJECTS };
	rec.objects = (struct cap_objects){ 1, &o };
	if (!err)
		err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ nprocs, procs };
	if (!err)
		err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_INTERVAL };
	rec.interval = (struct cap_interval){ 0, HOSTILE_MONO0, HOSTILE_MONO0 + 1000000000ull, 0,
					      nprocs, nprocs, NULL, st, rows };
	if (!err)
		err = cap_writer__put(w, &rec);
out:
	free(syms);
	free(procs);
	free(maps);
	free(st);
	free(rows);
	free(paths);
	return err;
}

/* format.md 4.3, 4.4: the processes, then rows going round them (no stacks). */
static int hostile_pids(struct cap_writer *w, uint32_t n, uint32_t nrows, bool control)
{
	struct cap_process *procs = calloc(n + 1, sizeof(*procs));
	struct cap_row *rows = calloc(nrows + 1, sizeof(*rows));
	uint32_t *pids = calloc(n + 1, sizeof(*pids)), i;
	struct cap_record rec;
	int err;

	if (!procs || !rows || !pids) {
		err = -ENOMEM;
		goto out;
	}
	if (control)
		for (i = 0; i < n; i++)
			pids[i] = i + 1;
	else
		colliding_pids(pids, n);
	for (i = 0; i < n; i++)
		procs[i] = (struct cap_process){ pids[i], CAP_PROC_F_NO_MAPS, 5000, "p", "", 0, NULL };
	for (i = 0; i < nrows; i++)
		rows[i] = (struct cap_row){ .pid = pids[i % n], .tid = pids[i % n], .comm = "p",
					    .count = 1 };
	err = hostile_meta(w);
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ n, procs };
	if (!err)
		err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_INTERVAL };
	rec.interval = (struct cap_interval){ 0, HOSTILE_MONO0, HOSTILE_MONO0 + 1000000000ull, 0, 0,
					      nrows, NULL, NULL, rows };
	if (!err)
		err = cap_writer__put(w, &rec);
out:
	free(procs);
	free(rows);
	free(pids);
	return err;
}

static int usage(void)
{
	fprintf(stderr, "usage: mkhostile ksyms|rows OUT.stk CHUNKS MIB\n"
			"       mkhostile objects OUT.stk NOBJ MIB [debugdata]\n"
			"       mkhostile ksyms-add OUT.stk MIB NADD [every|replace|one]\n"
			"       mkhostile long-name OUT.stk KIB NSTACKS DEPTH object|jit|kernel|path "
			"[mangled]\n"
			"       mkhostile dwarf OUT.stk MIB NADDR [dies|inlines]\n"
			"       mkhostile perfmap OUT.stk NSYMS same|spread NADDR\n"
			"       mkhostile paths OUT.stk NSYMS NPROCS [control]\n"
			"       mkhostile pids OUT.stk NPIDS NROWS [control]\n");
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
		if (argc < 7 || !strchr("ojkp", argv[6][0]))
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
	} else if (!strcmp(kind, "pids")) {
		if (a < 1 || a > 32768 || b > 1000000)
			return out_of_range();
	} else if (!strcmp(kind, "paths")) {
		if (a > 3000000 || b < 1 || b > 1000000)
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
		const char *how = argc > 5 ? argv[5] : "";

		/* inlines: MIB is the depth */
		err = hostile_dwarf(w, !strcmp(how, "inlines") ? a : (uint64_t)a << 20, b,
				    !strcmp(how, "dies") ? MKELF_DIES :
				    !strcmp(how, "inlines") ? MKELF_INLINES : 0);
	} else if (!strcmp(kind, "perfmap")) {
		err = hostile_perfmap(w, a, !strcmp(argv[4], "same"), strtoul(argv[5], NULL, 10));
	} else if (!strcmp(kind, "pids")) {
		err = hostile_pids(w, a, b, argc > 5 && !strcmp(argv[5], "control"));
	} else if (!strcmp(kind, "paths")) {
		err = hostile_paths(w, a, b, argc > 5 && !strcmp(argv[5], "control"));
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
