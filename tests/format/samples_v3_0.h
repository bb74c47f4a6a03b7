/* SPDX-License-Identifier: MIT */
/*
 * samples_v3_0.h: a capture of format 3.0 with known values: OBJECTS records whose symbol
 * tables are written the 3.0 way (format.md 4.8: address deltas, sizes and name lengths as
 * varints). The symbols make each varint take one, two, three and more bytes: neighbours 0x10
 * apart, a gap of 0x4000 and one of 2^40, aliases (a delta of 0), a size of 0 and one of
 * 0x200000, a Rust name of 133 bytes (a two-byte length), an empty table, and the symbol at
 * the highest address (2^64 - 16, a ten-byte varint); then the rows that hit them.
 *
 * FROZEN: tests/format/compat/v3.0.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V3_0_H
#define STK_TESTS_FORMAT_SAMPLES_V3_0_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s30_kv[] = {
	{ "host", "build-30" },
	{ "kernel", "6.1.0-43-amd64" },
	{ "arch", "x86_64" },
	{ "ncpus", "2" },
	{ "mode", "profile" },
	{ "weight", "count" },
	{ "freq_hz", "99" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "unwind", "auto" },
	{ "clock.mono_ns", "30000000000" },
	{ "clock.real_ns", "1800000000000000000" },
	{ "start.mono_ns", "30000000000" },
};

static struct cap_probe s30_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_SAMPLE, .nattached = 2, .spec = "cpu-clock" },
};

static struct cap_ksym s30_ksyms[] = {
	{ .addr = 0xffffffff81000100ull, .size = 0x80, .name = "asm_sysvec_apic_timer_interrupt" },
};

static struct cap_mapping s30_maps[] = {
	{ .start = 0x555555554000ull, .end = 0x555555556000ull, .pgoff = 0x1000, .dev = 0x803,
	  .inode = 3001, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x30, 0x01, 0x30, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/serve" },
	{ .start = 0x7ffff7c00000ull, .end = 0x7ffff7dbb000ull, .pgoff = 0, .dev = 0x803,
	  .inode = 3002, .kind = CAP_MAP_MEMFD, .flags = CAP_MAP_F_PSEUDO_ID, .build_id_len = 16,
	  .build_id = { 0x30, 0x02, 0x30, 0x02, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0x02 },
	  .path = "/memfd:agent" },
};

static struct cap_process s30_procs[] = {
	{ .pid = 3000, .flags = 0, .start_time = 29000000000ull, .comm = "serve",
	  .exe = "/usr/bin/serve", .nmaps = 2, .maps = s30_maps },
};

static struct cap_segment s30_segs_exe[] = {
	{ .offset = 0x1000, .vaddr = 0x401000, .filesz = 0x1000, .memsz = 0x1000 },
};

/* C names, deltas of one to three bytes, an alias pair and a size of 0 */
static struct cap_symbol s30_syms_exe[] = {
	{ .addr = 0x401000, .size = 0x10, .name = "_start" },
	{ .addr = 0x401010, .size = 0x0, .name = "deregister_tm_clones" },
	{ .addr = 0x401100, .size = 0x30, .name = "handle" },
	{ .addr = 0x401100, .size = 0x30, .name = "handle_alias" },
	{ .addr = 0x405100, .size = 0x200000, .name = "main" },
};

static struct cap_segment s30_segs_agent[] = {
	{ .offset = 0, .vaddr = 0, .filesz = 0x26000, .memsz = 0x26000 },
	{ .offset = 0x26000, .vaddr = 0x27000, .filesz = 0x195000, .memsz = 0x196000 },
};

/* Rust names (one over 127 bytes), a gap of 2^40 and the last 16 bytes of the address space */
static struct cap_symbol s30_syms_agent[] = {
	{ .addr = 0x27a40, .size = 0x1c4,
	  .name = "_ZN5agent6worker3run17h0123456789abcdefE" },
	{ .addr = 0x27c10, .size = 0x58,
	  .name = "_ZN103_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$core..iter..t"
		  "raits..iterator..Iterator$GT$4fold17h3c1a9d0e2f5b7a61E" },
	{ .addr = 0x10000027c10ull, .size = 0x8, .name = "far" },
	{ .addr = 0xfffffffffffffff0ull, .size = 0x10, .name = "top" },
};

static struct cap_object s30_objects[] = {
	{ .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20,
	  .build_id = { 0x30, 0x01, 0x30, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/serve", .debuglink = "", .nsegs = 1, .segs = s30_segs_exe,
	  .nsyms = 5, .syms = s30_syms_exe },
	{ .flags = CAP_OBJ_F_SYMTAB | CAP_OBJ_F_PSEUDO_ID, .build_id_len = 16,
	  .build_id = { 0x30, 0x02, 0x30, 0x02, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0x02 },
	  .path = "/memfd:agent", .debuglink = "", .nsegs = 2, .segs = s30_segs_agent,
	  .nsyms = 4, .syms = s30_syms_agent },
	/* an object without function symbols: an empty table */
	{ .flags = CAP_OBJ_F_DYNSYM, .build_id_len = 20,
	  .build_id = { 0x30, 0x03, 0x30, 0x03, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x03 },
	  .path = "/usr/lib/libempty.so", .debuglink = "libempty.so.debug" },
};

static uint64_t s30_k0[] = { 0xffffffff81000110ull };
/* handle <- main in serve; run in the agent */
static uint64_t s30_u0[] = { 0x555555554108ull, 0x555555558110ull };
static uint64_t s30_u1[] = { 0x7ffff7c27a50ull };

static struct cap_stack s30_kstacks[] = {
	{ .flags = 0, .nips = 1, .ips = s30_k0 },
};

static struct cap_stack s30_ustacks[] = {
	{ .flags = 0, .nips = 2, .ips = s30_u0 },
	{ .flags = 0, .nips = 1, .ips = s30_u1 },
};

static struct cap_row s30_rows[] = {
	{ .probe = 0, .pid = 3000, .tid = 3000, .comm = "serve", .kstack = 1, .ustack = 1,
	  .count = 30 },
	{ .probe = 0, .pid = 3000, .tid = 3001, .comm = "agent", .kstack = 0, .ustack = 2,
	  .count = 3 },
};

enum { SAMPLE30_NRECORDS = 7 };

/* Fills recs[0..6]: META, KSYMS_ADD, PROCS, OBJECTS, INTERVAL, LOSSES, END. */
static inline void sample30_records(struct cap_record recs[SAMPLE30_NRECORDS])
{
	memset(recs, 0, SAMPLE30_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s30_kv) / sizeof(s30_kv[0]);
	recs[0].meta.kv = s30_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s30_probes;
	recs[1].type = CAP_CHUNK_KSYMS_ADD;
	recs[1].ksyms.count = 1;
	recs[1].ksyms.syms = s30_ksyms;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 1;
	recs[2].procs.procs = s30_procs;
	recs[3].type = CAP_CHUNK_OBJECTS;
	recs[3].objects.count = 3;
	recs[3].objects.objs = s30_objects;
	recs[4].type = CAP_CHUNK_INTERVAL;
	recs[4].interval.seq = 0;
	recs[4].interval.start_ns = 30000000000ull;
	recs[4].interval.end_ns = 31000000000ull;
	recs[4].interval.nkstacks = 1;
	recs[4].interval.kstacks = s30_kstacks;
	recs[4].interval.nustacks = 2;
	recs[4].interval.ustacks = s30_ustacks;
	recs[4].interval.nrows = 2;
	recs[4].interval.rows = s30_rows;
	recs[5].type = CAP_CHUNK_LOSSES;
	recs[5].losses.interval_seq = 0;
	recs[6].type = CAP_CHUNK_END;
	recs[6].end.nintervals = 1;
	recs[6].end.end_ns = 31000000001ull;
	recs[6].end.events = 33;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V3_0_H */
