/* SPDX-License-Identifier: MIT */
/*
 * samples_v4_2.h: a capture of format 4.2 with known values: an OBJECTS record whose table holds
 * what 4.2 added (format.md 4.8): PLT stubs named NAME@plt (a C function's and a C++ one's, from
 * .plt.sec, and .plt.got's), and _init sized to the end of .init where the object gave it none;
 * then the rows that hit them.
 *
 * FROZEN: tests/format/compat/v4.2.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V4_2_H
#define STK_TESTS_FORMAT_SAMPLES_V4_2_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s42_kv[] = {
	{ "host", "build-42" },
	{ "kernel", "6.18.0-1-amd64" },
	{ "arch", "x86_64" },
	{ "ncpus", "2" },
	{ "mode", "count" },
	{ "weight", "count" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "unwind", "auto" },
	{ "clock.mono_ns", "31000000000" },
	{ "clock.real_ns", "1810000000000000000" },
	{ "start.mono_ns", "31000000000" },
};

static struct cap_probe s42_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_UPROBE, .nattached = 1, .spec = "/usr/bin/cmp:memcmp@plt" },
};

static struct cap_mapping s42_maps[] = {
	{ .start = 0x555555555000ull, .end = 0x555555556000ull, .pgoff = 0x1000, .dev = 0x803,
	  .inode = 3101, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x31, 0x01, 0x31, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/cmp" },
};

static struct cap_process s42_procs[] = {
	{ .pid = 3100, .flags = 0, .start_time = 30000000000ull, .comm = "cmp",
	  .exe = "/usr/bin/cmp", .nmaps = 1, .maps = s42_maps },
};

static struct cap_segment s42_segs[] = {
	{ .offset = 0x1000, .vaddr = 0x1000, .filesz = 0x1000, .memsz = 0x1000 },
};

/* _init sized to .init's end, the stubs of .plt.got and .plt.sec, then the program's functions */
static struct cap_symbol s42_syms[] = {
	{ .addr = 0x1000, .size = 0x17, .name = "_init" },
	{ .addr = 0x1060, .size = 0x10, .name = "__cxa_finalize@plt" },
	{ .addr = 0x1070, .size = 0x10, .name = "memcmp@plt" },
	{ .addr = 0x1080, .size = 0x10,
	  .name = "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4dataEv@plt" },
	{ .addr = 0x1090, .size = 0x26, .name = "_start" },
	{ .addr = 0x1140, .size = 0x40, .name = "compare" },
	{ .addr = 0x1180, .size = 0x60, .name = "main" },
};

static struct cap_object s42_objects[] = {
	{ .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20,
	  .build_id = { 0x31, 0x01, 0x31, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/cmp", .debuglink = "", .nsegs = 1, .segs = s42_segs,
	  .nsyms = 7, .syms = s42_syms },
};

/* memcmp@plt <- compare <- main; the C++ stub <- main */
static uint64_t s42_u0[] = { 0x555555555070ull, 0x555555555158ull, 0x5555555551a0ull };
static uint64_t s42_u1[] = { 0x555555555084ull, 0x5555555551c4ull };

static struct cap_stack s42_ustacks[] = {
	{ .flags = 0, .nips = 3, .ips = s42_u0 },
	{ .flags = 0, .nips = 2, .ips = s42_u1 },
};

static struct cap_row s42_rows[] = {
	{ .probe = 0, .pid = 3100, .tid = 3100, .comm = "cmp", .kstack = 0, .ustack = 1,
	  .count = 31 },
	{ .probe = 0, .pid = 3100, .tid = 3100, .comm = "cmp", .kstack = 0, .ustack = 2,
	  .count = 4 },
};

enum { SAMPLE42_NRECORDS = 6 };

/* Fills recs[0..5]: META, PROCS, OBJECTS, INTERVAL, LOSSES, END. */
static inline void sample42_records(struct cap_record recs[SAMPLE42_NRECORDS])
{
	memset(recs, 0, SAMPLE42_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s42_kv) / sizeof(s42_kv[0]);
	recs[0].meta.kv = s42_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s42_probes;
	recs[1].type = CAP_CHUNK_PROCS;
	recs[1].procs.count = 1;
	recs[1].procs.procs = s42_procs;
	recs[2].type = CAP_CHUNK_OBJECTS;
	recs[2].objects.count = 1;
	recs[2].objects.objs = s42_objects;
	recs[3].type = CAP_CHUNK_INTERVAL;
	recs[3].interval.seq = 0;
	recs[3].interval.start_ns = 31000000000ull;
	recs[3].interval.end_ns = 32000000000ull;
	recs[3].interval.nustacks = 2;
	recs[3].interval.ustacks = s42_ustacks;
	recs[3].interval.nrows = 2;
	recs[3].interval.rows = s42_rows;
	recs[4].type = CAP_CHUNK_LOSSES;
	recs[4].losses.interval_seq = 0;
	recs[5].type = CAP_CHUNK_END;
	recs[5].end.nintervals = 1;
	recs[5].end.end_ns = 32000000001ull;
	recs[5].end.events = 35;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V4_2_H */
