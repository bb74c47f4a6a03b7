/* SPDX-License-Identifier: MIT */
/*
 * hostile.h: captures made to hurt a reader, shared by tests/tools/mkhostile (for
 * tests/check/hostile.sh) and tests/unit/rep_budget: an lz4 bomb of chunks of zeros, and many
 * embedded objects with compressed debug data (mkelf.h) hit by one interval. Every function
 * returns 0 or a negative errno from the writer. Deterministic: the same arguments give the
 * same bytes.
 */
#ifndef STK_TESTS_TOOLS_HOSTILE_H
#define STK_TESTS_TOOLS_HOSTILE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stk/capture.h>

#include "mkelf.h"

#define HOSTILE_MONO0 1000000000000ull
#define HOSTILE_BASE 0x10000000ull	/* object i is mapped at HOSTILE_BASE + i * 0x10000 */
#define HOSTILE_STRIDE 0x10000ull

static inline int hostile_meta(struct cap_writer *w)
{
	struct cap_kv kv[] = {
		{ "host", "hostile" }, { "kernel", "6.1.0-hostile" }, { "arch", "x86_64" },
		{ "ncpus", "1" }, { "mode", "count" }, { "clock", "monotonic" },
	};
	struct cap_probe probe = { 0, CAP_PROBE_UPROBE, 1, "u:/hostile:probe" };
	struct cap_record rec = { .type = CAP_CHUNK_META };

	rec.meta = (struct cap_meta){ sizeof(kv) / sizeof(kv[0]), kv, 1, &probe };
	return cap_writer__put(w, &rec);
}

/* format.md 1: little-endian on every host */
static inline void hostile_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * chunks raw chunks of type, each of len bytes of zeros but for the largest element count
 * (elements of elem bytes after head bytes) at count_off, and a u32 chunk number at seq_off
 * (when not SIZE_MAX): a few hundred KiB on disk per 64 MiB decoded.
 */
static inline int hostile_bomb(struct cap_writer *w, uint16_t type, uint32_t chunks, size_t len,
			       size_t head, size_t count_off, size_t seq_off, size_t elem)
{
	uint32_t count = (uint32_t)((len - head) / elem), i;
	uint8_t *p;
	int err = 0;

	len = head + (size_t)count * elem;	/* the record fills its payload exactly */
	p = calloc(1, len);
	if (!p)
		return -ENOMEM;
	hostile_put_u32(p + count_off, count);
	for (i = 0; i < chunks && !err; i++) {
		if (seq_off != SIZE_MAX)
			hostile_put_u32(p + seq_off, i);
		err = cap_writer__put_raw(w, type, CAP_CHUNK_F_MANDATORY, p, len);
	}
	free(p);
	return err;
}

/* format.md 4.2: flags, count, count x { addr, str name, str module } (16 bytes each) */
static inline int hostile_ksyms_bomb(struct cap_writer *w, uint32_t chunks, size_t len)
{
	return hostile_bomb(w, CAP_CHUNK_KSYMS, chunks, len, 8, 4, SIZE_MAX, 16);
}

/* format.md 4.4: seq, start, end, no kernel and no user stacks, nrows at 28, rows of 36 bytes */
static inline int hostile_rows_bomb(struct cap_writer *w, uint32_t chunks, size_t len)
{
	return hostile_bomb(w, CAP_CHUNK_INTERVAL, chunks, len, 32, 28, 0, 36);
}

/*
 * nobj embedded whole objects (mkelf_make(), debug_bytes of compressed zeros, flags), one
 * process (pid 100) mapping them all, one interval whose user stacks hit each object once, in
 * hostile_fn_(i % 4) of object i, and an END record.
 */
static inline int hostile_objects(struct cap_writer *w, uint32_t nobj, uint64_t debug_bytes,
				  unsigned int flags)
{
	struct cap_mapping *maps = calloc(nobj, sizeof(*maps));
	uint32_t nstacks = (nobj + CAP_MAX_STACK_DEPTH - 1) / CAP_MAX_STACK_DEPTH, i;
	struct cap_stack *us = calloc(nstacks ? nstacks : 1, sizeof(*us));
	struct cap_row *rows = calloc(nstacks ? nstacks : 1, sizeof(*rows));
	uint64_t *ips = calloc(nobj ? nobj : 1, sizeof(*ips));
	struct cap_symbol syms[MKELF_NFUNCS];
	struct cap_process proc = { 100, 0, 5000, "hostile", "/hostile/main", nobj, maps };
	struct cap_record rec;
	char name[MKELF_NFUNCS][32];
	int err = 0;

	if (!maps || !us || !rows || !ips) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < MKELF_NFUNCS; i++) {
		snprintf(name[i], sizeof(name[i]), "hostile_fn_%u", i);
		syms[i] = (struct cap_symbol){ MKELF_TEXT + i * MKELF_FUNC_SIZE, MKELF_FUNC_SIZE,
					       name[i] };
	}
	err = hostile_meta(w);
	for (i = 0; i < nobj && !err; i++) {
		struct cap_segment seg = { 0, 0, MKELF_LOAD_END, MKELF_LOAD_END };
		struct cap_object o = { 0 };
		struct mkelf_buf elf;
		char *path;

		o.build_id_len = 20;
		memset(o.build_id, 0x5a, 20);
		memcpy(o.build_id, &i, sizeof(i));
		if (asprintf(&path, "/hostile/obj%u.so", i) < 0) {
			err = -ENOMEM;
			break;
		}
		mkelf_make(&elf, o.build_id, debug_bytes, flags);
		o.flags = CAP_OBJ_F_WHOLE | ((flags & MKELF_DEBUGDATA) ? CAP_OBJ_F_DYNSYM :
								    CAP_OBJ_F_SYMTAB);
		o.path = path;
		o.debuglink = "";
		o.nsegs = 1;
		o.segs = &seg;
		o.nsyms = MKELF_NFUNCS;
		o.syms = syms;
		o.data_len = elf.len;
		o.data = elf.p;
		rec = (struct cap_record){ .type = CAP_CHUNK_OBJECTS };
		rec.objects = (struct cap_objects){ 1, &o };
		err = cap_writer__put(w, &rec);
		maps[i] = (struct cap_mapping){ .start = HOSTILE_BASE + i * HOSTILE_STRIDE,
						.end = HOSTILE_BASE + i * HOSTILE_STRIDE + 0x1000,
						.kind = CAP_MAP_FILE, .build_id_len = 20,
						.path = path };
		memcpy(maps[i].build_id, o.build_id, 20);
		/* inside hostile_fn_(i % 4), past its first byte (non-leaf frames look up addr-1) */
		ips[i] = maps[i].start + MKELF_TEXT + (i % MKELF_NFUNCS) * MKELF_FUNC_SIZE + 4;
		free(elf.p);
	}
	if (err)
		goto out;
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ 1, &proc };
	err = cap_writer__put(w, &rec);
	for (i = 0; i < nstacks; i++) {
		uint32_t first = i * CAP_MAX_STACK_DEPTH;

		us[i].ips = ips + first;
		us[i].nips = nobj - first > CAP_MAX_STACK_DEPTH ? CAP_MAX_STACK_DEPTH : nobj - first;
		rows[i] = (struct cap_row){ .pid = 100, .tid = 100, .comm = "hostile",
					    .ustack = i + 1, .count = 1 };
	}
	rec = (struct cap_record){ .type = CAP_CHUNK_INTERVAL };
	rec.interval = (struct cap_interval){ 0, HOSTILE_MONO0, HOSTILE_MONO0 + 1000000000ull, 0,
					      nstacks, nstacks, NULL, us, rows };
	if (!err)
		err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_END };
	rec.end = (struct cap_end){ 1, HOSTILE_MONO0 + 1000000000ull, nstacks };
	if (!err)
		err = cap_writer__put(w, &rec);
out:
	for (i = 0; maps && i < nobj; i++)
		free(maps[i].path);
	free(maps);
	free(us);
	free(rows);
	free(ips);
	return err;
}

#endif /* STK_TESTS_TOOLS_HOSTILE_H */
