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
 * ips[0..n) as stacks of depth frames (the last may be shorter), one row of pid 100 each, user
 * stacks (kernel ones with kernel), in one interval of one second; then an END record.
 */
static inline int hostile_interval_end(struct cap_writer *w, uint64_t *ips, uint32_t n,
				       uint32_t depth, bool kernel)
{
	uint32_t nstacks = (n + depth - 1) / depth, i;
	struct cap_stack *st = calloc(nstacks + 1, sizeof(*st));
	struct cap_row *rows = calloc(nstacks + 1, sizeof(*rows));
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };
	int err;

	if (!st || !rows) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nstacks; i++) {
		uint32_t first = i * depth;

		st[i] = (struct cap_stack){ 0, n - first > depth ? depth : n - first, ips + first };
		rows[i] = (struct cap_row){ .pid = 100, .tid = 100, .comm = "hostile", .count = 1 };
		if (kernel)
			rows[i].kstack = i + 1;
		else
			rows[i].ustack = i + 1;
	}
	rec.interval = (struct cap_interval){ 0, HOSTILE_MONO0, HOSTILE_MONO0 + 1000000000ull,
					      kernel ? nstacks : 0, kernel ? 0 : nstacks, nstacks,
					      kernel ? st : NULL, kernel ? NULL : st, rows };
	err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_END };
	rec.end = (struct cap_end){ 1, HOSTILE_MONO0 + 1000000000ull, nstacks };
	if (!err)
		err = cap_writer__put(w, &rec);
out:
	free(st);
	free(rows);
	return err;
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
	uint64_t *ips = calloc(nobj ? nobj : 1, sizeof(*ips));
	uint32_t i;
	struct cap_symbol syms[MKELF_NFUNCS];
	struct cap_process proc = { 100, 0, 5000, "hostile", "/hostile/main", nobj, maps };
	struct cap_record rec;
	char name[MKELF_NFUNCS][32];
	int err = 0;

	if (!maps || !ips) {
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
	if (!err)
		err = hostile_interval_end(w, ips, nobj, CAP_MAX_STACK_DEPTH, false);
out:
	for (i = 0; maps && i < nobj; i++)
		free(maps[i].path);
	free(maps);
	free(ips);
	return err;
}

/*
 * A KSYMS table of len bytes of zeros (len / 16 symbols, all at address 0) and then nadd
 * KSYMS_ADD records of one symbol each, "k", 16 bytes at HOSTILE_KADDR + 16 * i (format.md 4.10:
 * each is added to the whole table). With every: an interval after each record, whose kernel
 * stack holds the symbol just added (the table is in use when the next record comes); with
 * replace: each record replaces the symbol before (the same address, another size), so that
 * the intervals read before must keep their table; with one, all in one record (the control:
 * the same table and report). Then one interval hitting the symbols added last, and an END
 * record.
 */
#define HOSTILE_KADDR 0xffffffff81000000ull
#define HOSTILE_KSYMS_EVERY 0x1u
#define HOSTILE_KSYMS_REPLACE 0x2u
#define HOSTILE_KSYMS_ONE 0x4u	/* the control: the same symbols in one KSYMS_ADD record */

static inline int hostile_put_kstack_interval(struct cap_writer *w, uint32_t seq, uint64_t *ips,
					      uint32_t n)
{
	struct cap_stack st = { 0, n, ips };
	struct cap_row row = { .pid = 0, .tid = 0, .comm = "swapper/0", .kstack = 1, .count = 1 };
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };

	rec.interval = (struct cap_interval){ seq, HOSTILE_MONO0 + seq, HOSTILE_MONO0 + seq + 1, 1,
					      0, 1, &st, NULL, &row };
	return cap_writer__put(w, &rec);
}

static inline int hostile_ksyms_adds(struct cap_writer *w, size_t len, uint32_t nadd,
				     unsigned int flags)
{
	uint32_t nips = nadd < CAP_MAX_STACK_DEPTH ? nadd : CAP_MAX_STACK_DEPTH, seq = 0, i;
	uint64_t *ips = calloc(nips ? nips : 1, sizeof(*ips));
	struct cap_ksym *all = calloc(nadd ? nadd : 1, sizeof(*all));
	struct cap_record rec = { .type = CAP_CHUNK_KSYMS_ADD };
	struct cap_ksym sym = { 0, "k", NULL, 16 };
	int err = ips && all ? hostile_meta(w) : -ENOMEM;

	if (!err && len)
		err = hostile_bomb(w, CAP_CHUNK_KSYMS, 1, len, 8, 4, SIZE_MAX, 16);
	if (flags & HOSTILE_KSYMS_ONE) {
		for (i = 0; i < nadd; i++)
			all[i] = (struct cap_ksym){ HOSTILE_KADDR + 16ull * i, "k", NULL, 16 };
		rec.ksyms = (struct cap_ksyms){ 0, nadd, all };
		if (!err)
			err = cap_writer__put(w, &rec);
	}
	for (i = 0; i < nadd && !err && !(flags & HOSTILE_KSYMS_ONE); i++) {
		bool replace = flags & HOSTILE_KSYMS_REPLACE;

		sym.addr = HOSTILE_KADDR + (replace ? 0 : 16ull * i);
		sym.size = replace ? 16 + (i & 1) : 16;
		rec.ksyms = (struct cap_ksyms){ 0, 1, &sym };
		err = cap_writer__put(w, &rec);
		if (!err && (flags & HOSTILE_KSYMS_EVERY)) {
			uint64_t ip = sym.addr + 4;

			err = hostile_put_kstack_interval(w, seq++, &ip, 1);
		}
	}
	for (i = 0; i < nips; i++)
		ips[i] = HOSTILE_KADDR + 16ull * (nadd - 1 - i) + 4;
	if (!err && nips)
		err = hostile_put_kstack_interval(w, seq++, ips, nips);
	rec = (struct cap_record){ .type = CAP_CHUNK_END };
	rec.end = (struct cap_end){ seq, HOSTILE_MONO0 + seq, seq };
	if (!err)
		err = cap_writer__put(w, &rec);
	free(ips);
	free(all);
	return err;
}

/*
 * A symbol whose name is name_len bytes of 'x' (prefixed "_Z" with mangled), named by nstacks
 * user stacks of depth frames, each frame at another address of it. Where the name is: in an
 * OBJECTS record (symbol tables only) of an object that one process maps (where 'o'), in that
 * process's PERFMAP record with an anonymous executable mapping ('j'), or in a KSYMS_ADD record,
 * the stacks then being kernel stacks ('k'); with 'p' the name is the object's path (its
 * mapping's and its record's), and its symbol "s". One interval holds the stacks, one row each.
 */
#define HOSTILE_NAME_BASE 0x10000000ull

static inline int hostile_long_name(struct cap_writer *w, size_t name_len, uint32_t nstacks,
				    uint32_t depth, char where, bool mangled)
{
	uint64_t span = (uint64_t)nstacks * depth * 16 + 0x1000;
	char *name = malloc(name_len + 1);
	uint64_t *ips = calloc((size_t)nstacks * depth + 1, sizeof(*ips));
	struct cap_mapping map = { .start = HOSTILE_NAME_BASE, .end = HOSTILE_NAME_BASE + span,
				   .kind = where == 'j' ? CAP_MAP_ANON_EXEC : CAP_MAP_FILE,
				   .build_id_len = 20, .path = where == 'j' ? "" : "/hostile/long.so" };
	bool long_path = where == 'p';
	struct cap_process proc = { 100, 0, 5000, "hostile", "/hostile/main", 1, &map };
	struct cap_symbol sym = { where == 'j' ? HOSTILE_NAME_BASE : 0, span, name };
	struct cap_segment seg = { 0, 0, span, span };
	struct cap_ksym ksym = { HOSTILE_KADDR, name, NULL, span };
	uint64_t base = where == 'k' ? HOSTILE_KADDR : HOSTILE_NAME_BASE;
	struct cap_object o = { 0 };
	struct cap_record rec;
	uint32_t i;
	int err;

	if (!name || !ips) {
		err = -ENOMEM;
		goto out;
	}
	memset(name, 'x', name_len);
	if (mangled && name_len >= 2)
		memcpy(name, "_Z", 2);
	name[name_len] = 0;
	if (long_path) {
		name[0] = '/';
		map.path = name;
		sym.name = "s";
		where = 'o';
	}
	memset(map.build_id, 0x6c, 20);
	err = hostile_meta(w);
	if (!err && where == 'o') {
		o.flags = CAP_OBJ_F_SYMTAB;
		o.build_id_len = 20;
		memcpy(o.build_id, map.build_id, 20);
		o.path = map.path;
		o.debuglink = "";
		o.nsegs = 1;
		o.segs = &seg;
		o.nsyms = 1;
		o.syms = &sym;
		rec = (struct cap_record){ .type = CAP_CHUNK_OBJECTS };
		rec.objects = (struct cap_objects){ 1, &o };
		err = cap_writer__put(w, &rec);
	}
	if (!err && where == 'k') {
		rec = (struct cap_record){ .type = CAP_CHUNK_KSYMS_ADD };
		rec.ksyms = (struct cap_ksyms){ 0, 1, &ksym };
		err = cap_writer__put(w, &rec);
	}
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ 1, &proc };
	if (!err)
		err = cap_writer__put(w, &rec);
	if (!err && where == 'j') {
		rec = (struct cap_record){ .type = CAP_CHUNK_PERFMAP };
		rec.perfmap = (struct cap_perfmap){ 100, 5000, 1, &sym };
		err = cap_writer__put(w, &rec);
	}
	for (i = 0; i < nstacks * depth; i++)
		ips[i] = base + 0x10 + 16ull * i;
	if (!err)
		err = hostile_interval_end(w, ips, nstacks * depth, depth, where == 'k');
out:
	free(name);
	free(ips);
	return err;
}

/*
 * One embedded whole object (mkelf_make_sized(), functions of 1 MiB / 4) with debug_bytes of
 * zeros in a compressed .debug_info (a unit of length 0 every 4 bytes), or with flags
 * MKELF_DIES a unit of debug_bytes childless entries in a block the walk to every address
 * passes, which one process maps, and one interval whose stacks (one row each, 1024 frames at
 * most) hit naddrs distinct addresses of it.
 */
static inline int hostile_dwarf(struct cap_writer *w, uint64_t debug_bytes, uint32_t naddrs,
				unsigned int flags)
{
	const uint32_t func_size = 1u << 18;
	uint64_t load_end = MKELF_LOAD_END_SIZED(func_size);
	uint64_t *ips = calloc(naddrs + 1, sizeof(*ips));
	struct cap_mapping map = { .start = HOSTILE_BASE, .end = HOSTILE_BASE + load_end,
				   .kind = CAP_MAP_FILE, .build_id_len = 20,
				   .path = "/hostile/dwarf.so" };
	struct cap_process proc = { 100, 0, 5000, "hostile", "/hostile/main", 1, &map };
	struct cap_segment seg = { 0, 0, load_end, load_end };
	struct cap_symbol syms[MKELF_NFUNCS];
	char name[MKELF_NFUNCS][32];
	struct cap_object o = { 0 };
	struct mkelf_buf elf = { 0 };
	struct cap_record rec;
	uint32_t i;
	int err;

	if (!ips || naddrs > MKELF_NFUNCS * func_size / 16) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < MKELF_NFUNCS; i++) {
		snprintf(name[i], sizeof(name[i]), "hostile_fn_%u", i);
		syms[i] = (struct cap_symbol){ MKELF_TEXT + i * func_size, func_size, name[i] };
	}
	memset(map.build_id, 0x64, 20);
	mkelf_make_sized(&elf, map.build_id, debug_bytes, flags, func_size);
	o = (struct cap_object){ .flags = CAP_OBJ_F_WHOLE | CAP_OBJ_F_SYMTAB, .build_id_len = 20,
				 .path = map.path, .debuglink = "", .nsegs = 1, .segs = &seg,
				 .nsyms = MKELF_NFUNCS, .syms = syms, .data_len = elf.len,
				 .data = elf.p };
	memcpy(o.build_id, map.build_id, 20);
	err = hostile_meta(w);
	rec = (struct cap_record){ .type = CAP_CHUNK_OBJECTS };
	rec.objects = (struct cap_objects){ 1, &o };
	if (!err)
		err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ 1, &proc };
	if (!err)
		err = cap_writer__put(w, &rec);
	/* spread over the four functions, 16 bytes apart */
	for (i = 0; i < naddrs; i++)
		ips[i] = HOSTILE_BASE + MKELF_TEXT + (uint64_t)(i % MKELF_NFUNCS) * func_size +
			 16ull * (i / MKELF_NFUNCS) + 4;
	if (!err)
		err = hostile_interval_end(w, ips, naddrs, CAP_MAX_STACK_DEPTH, false);
out:
	free(elf.p);
	free(ips);
	return err;
}

/*
 * A JIT process (pid 100, one anonymous executable mapping) whose perf map holds nsyms entries
 * "a" (format.md 4.9), all of 4096 bytes at HOSTILE_NAME_BASE (same) or of 16 bytes each after
 * the one before, in PERFMAP records of up to 64 MiB; then one interval whose stack hits naddrs
 * distinct addresses (4 bytes apart, or one in each of the first entries), and an END record.
 */
static inline int hostile_perfmap(struct cap_writer *w, uint64_t nsyms, bool same,
				  uint32_t naddrs)
{
	const uint32_t per_rec = (CAP_MAX_CHUNK_RAW - 16) / 21;
	uint32_t n = nsyms < per_rec ? (uint32_t)nsyms : per_rec, i;
	struct cap_symbol *syms = calloc(n + 1, sizeof(*syms));
	uint64_t *ips = calloc(naddrs + 1, sizeof(*ips)), done = 0;
	struct cap_mapping map = { .start = HOSTILE_NAME_BASE, .end = HOSTILE_NAME_BASE +
				   (same ? 4096 : 16 * nsyms) + 0x1000, .kind = CAP_MAP_ANON_EXEC,
				   .path = "" };
	struct cap_process proc = { 100, 0, 5000, "hostile", "/hostile/main", 1, &map };
	struct cap_stack st = { 0, naddrs, ips };
	struct cap_row row = { .pid = 100, .tid = 100, .comm = "hostile", .ustack = 1, .count = 1 };
	struct cap_record rec;
	int err;

	if (!syms || !ips || naddrs > CAP_MAX_STACK_DEPTH || (!same && naddrs > nsyms)) {
		err = -EINVAL;
		goto out;
	}
	err = hostile_meta(w);
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS };
	rec.procs = (struct cap_procs){ 1, &proc };
	if (!err)
		err = cap_writer__put(w, &rec);
	while (!err && done < nsyms) {
		n = nsyms - done < per_rec ? (uint32_t)(nsyms - done) : per_rec;
		for (i = 0; i < n; i++)
			syms[i] = (struct cap_symbol){ HOSTILE_NAME_BASE +
						       (same ? 0 : 16 * (done + i)), same ? 4096 : 16,
						       "a" };
		rec = (struct cap_record){ .type = CAP_CHUNK_PERFMAP };
		rec.perfmap = (struct cap_perfmap){ 100, 5000, n, syms };
		err = cap_writer__put(w, &rec);
		done += n;
	}
	for (i = 0; i < naddrs; i++)
		ips[i] = HOSTILE_NAME_BASE + (same ? 4ull * i : 16ull * i + 4);
	rec = (struct cap_record){ .type = CAP_CHUNK_INTERVAL };
	rec.interval = (struct cap_interval){ 0, HOSTILE_MONO0, HOSTILE_MONO0 + 1000000000ull, 0,
					      naddrs ? 1 : 0, 1, NULL, &st, &row };
	if (!naddrs)
		row.ustack = 0;
	if (!err)
		err = cap_writer__put(w, &rec);
	rec = (struct cap_record){ .type = CAP_CHUNK_END };
	rec.end = (struct cap_end){ 1, HOSTILE_MONO0 + 1000000000ull, 1 };
	if (!err)
		err = cap_writer__put(w, &rec);
out:
	free(syms);
	free(ips);
	return err;
}

#endif /* STK_TESTS_TOOLS_HOSTILE_H */
