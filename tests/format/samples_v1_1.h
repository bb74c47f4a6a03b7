/* SPDX-License-Identifier: MIT */
/*
 * samples_v1_1.h: one record of each type of format 1.1 with known values, the new ones (EVENTS,
 * OBJECTS with and without whole-file data, PERFMAP, LOSSES with per-CPU drops, a second KSYMS)
 * included.
 *
 * FROZEN: tests/format/compat/v1.1.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V1_1_H
#define STK_TESTS_FORMAT_SAMPLES_V1_1_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s11_kv[] = {
	{ "host", "build-11" },
	{ "kernel", "6.1.0-27-amd64" },
	{ "arch", "x86_64" },
	{ "mode", "snoop" },
	{ "event", "cpu-clock" },
	{ "weight", "events" },
	{ "objects", "whole" },
	{ "probe.0.mechanism", "kprobe.multi" },
	{ "probe.0.skipped", "2" },
	{ "clock.mono_ns", "5000000000" },
	{ "clock.real_ns", "1767322800000000000" },
};

static struct cap_probe s11_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_KFUNC, .nattached = 14, .spec = "tcp_send*" },
	{ .id = 1, .kind = CAP_PROBE_TRACEPOINT, .nattached = 1,
	  .spec = "t:sched:sched_switch" },
};

static struct cap_ksym s11_syms_a[] = {
	{ 0xffffffff81000000ull, "_stext", NULL },
	{ 0xffffffff81200000ull, "tcp_sendmsg", NULL },
};

/* The re-snapshot after a module load: replaces the first table. */
static struct cap_ksym s11_syms_b[] = {
	{ 0xffffffff81000000ull, "_stext", NULL },
	{ 0xffffffff81200000ull, "tcp_sendmsg", NULL },
	{ 0xffffffffc0100000ull, "nf_hook_slow_mod", "nf_tables" },
};

static struct cap_mapping s11_maps[] = {
	{ .start = 0x400000ull, .end = 0x401000ull, .pgoff = 0, .dev = 0x803, .inode = 99,
	  .kind = CAP_MAP_FILE, .flags = CAP_MAP_F_NS_PATH, .build_id_len = 20,
	  .build_id = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
			0x66, 0x77, 0x88, 0x99, 0x10, 0x20, 0x30, 0x40 },
	  .path = "/app/server" },
	{ .start = 0x7f0000000000ull, .end = 0x7f0000010000ull, .pgoff = 0x2000, .dev = 0x803,
	  .inode = 100, .kind = CAP_MAP_FILE, .flags = CAP_MAP_F_PSEUDO_ID | CAP_MAP_F_DELETED,
	  .build_id_len = 16,
	  .build_id = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98,
			0x76, 0x54, 0x32, 0x10 },
	  .path = "/usr/lib/libnoid.so" },
	{ .start = 0x7f1000000000ull, .end = 0x7f1000100000ull, .kind = CAP_MAP_ANON_EXEC,
	  .flags = CAP_MAP_F_NO_BUILD_ID, .path = "" },
};

static struct cap_process s11_procs[] = {
	{ .pid = 3100, .flags = 0, .start_time = 123000000ull, .comm = "server",
	  .exe = "/app/server", .nmaps = 3, .maps = s11_maps },
};

static struct cap_segment s11_segs_server[] = {
	{ .offset = 0, .vaddr = 0x400000, .filesz = 0x800, .memsz = 0x800 },
	{ .offset = 0x1000, .vaddr = 0x401000, .filesz = 0x200, .memsz = 0x4000 },
};

static struct cap_symbol s11_objsyms_server[] = {
	{ .addr = 0x400100, .size = 0x40, .name = "main" },
	{ .addr = 0x400140, .size = 0x20, .name = "_ZN3app5serveEv" },
	{ .addr = 0x400140, .size = 0x20, .name = "serve_alias" },
	{ .addr = 0x400160, .size = 0, .name = "" },
};

static struct cap_segment s11_segs_noid[] = {
	{ .offset = 0x2000, .vaddr = 0x2000, .filesz = 0x40, .memsz = 0x40 },
};

static struct cap_symbol s11_objsyms_noid[] = {
	{ .addr = 0x2010, .size = 0x10, .name = "noid_func" },
};

/* Bytes of the "whole file" of the second object: NULs and high bytes included. */
static uint8_t s11_data_noid[64] = {
	0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	3, 0, 0x3e, 0, 1, 0, 0, 0, 0xff, 0xfe, 0xfd, 0xfc, 0, 0, 0, 0,
	0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0,
	'n', 'o', 'i', 'd', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
};

static struct cap_object s11_objects[] = {
	{ .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20,
	  .build_id = { 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
			0x66, 0x77, 0x88, 0x99, 0x10, 0x20, 0x30, 0x40 },
	  .path = "/app/server", .debuglink = "server.debug", .nsegs = 2, .segs = s11_segs_server,
	  .nsyms = 4, .syms = s11_objsyms_server, .data_len = 0, .data = NULL },
	{ .flags = CAP_OBJ_F_DYNSYM | CAP_OBJ_F_WHOLE | CAP_OBJ_F_PSEUDO_ID, .build_id_len = 16,
	  .build_id = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98,
			0x76, 0x54, 0x32, 0x10 },
	  .path = "/usr/lib/libnoid.so", .debuglink = "", .nsegs = 1, .segs = s11_segs_noid,
	  .nsyms = 1, .syms = s11_objsyms_noid, .data_len = sizeof(s11_data_noid),
	  .data = s11_data_noid },
	{ .flags = CAP_OBJ_F_DEBUGDATA, .build_id_len = 0, .path = "[vdso]", .debuglink = "",
	  .nsegs = 0, .segs = NULL, .nsyms = 0, .syms = NULL, .data_len = 0, .data = NULL },
};

/* File order, not sorted: the last entry redefines the first one's address. */
static struct cap_symbol s11_jit[] = {
	{ .addr = 0x7f1000000100ull, .size = 0x80, .name = "jit_old" },
	{ .addr = 0x7f1000000000ull, .size = 0x100, .name = "Interpreter::run(int)" },
	{ .addr = 0x7f1000000100ull, .size = 0x40, .name = "jit_new" },
};

static uint64_t s11_k0[] = { 0xffffffff81200010ull, 0xffffffff81000100ull };
static uint64_t s11_u0[] = { 0x400150ull, 0x400110ull };
static uint64_t s11_u1[] = { 0x7f1000000120ull, 0x7f0000002018ull, 0x400108ull };

static struct cap_stack s11_kstacks[] = {
	{ .flags = 0, .nips = 2, .ips = s11_k0 },
};

static struct cap_stack s11_ustacks[] = {
	{ .flags = 0, .nips = 2, .ips = s11_u0 },
	{ .flags = CAP_STACK_F_TRUNCATED, .nips = 3, .ips = s11_u1 },
};

static struct cap_row s11_count_rows[] = {
	{ .probe = 0, .pid = 3100, .tid = 3101, .comm = "server", .kstack = 1, .ustack = 1,
	  .count = 12 },
	{ .probe = 1, .pid = 3100, .tid = 3100, .comm = "server", .kstack = 0, .ustack = 2,
	  .count = 250000 },
};

static struct cap_row s11_event_rows[] = {
	{ .probe = 0, .pid = 3100, .tid = 3101, .comm = "server", .kstack = 1, .ustack = 1,
	  .count = 1, .ts_ns = 6000000001ull, .cpu = 0 },
	{ .probe = 0, .pid = 3100, .tid = 3102, .flags = CAP_ROW_F_USTACK_LOST, .comm = "server",
	  .kstack = 1, .ustack = 0, .count = 1, .ts_ns = 6000000500ull, .cpu = 3 },
	{ .probe = 1, .pid = 3100, .tid = 3101, .comm = "server", .kstack = 0, .ustack = 2,
	  .count = 1, .ts_ns = 6000000002ull, .cpu = 4095 },
};

/* CPU 1 dropped nothing: not on disk, decoded as 0 (ncpus is the highest CPU + 1). */
static uint64_t s11_cpu_dropped[] = { 5, 0, 1000000, 7 };

enum { SAMPLE11_NRECORDS = 10 };

/*
 * Fills recs[0..9]: META, KSYMS, PROCS, OBJECTS, PERFMAP, INTERVAL, EVENTS, LOSSES, KSYMS (the
 * re-snapshot), END.
 */
static inline void sample11_records(struct cap_record recs[SAMPLE11_NRECORDS])
{
	memset(recs, 0, SAMPLE11_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s11_kv) / sizeof(s11_kv[0]);
	recs[0].meta.kv = s11_kv;
	recs[0].meta.nprobes = 2;
	recs[0].meta.probes = s11_probes;
	recs[1].type = CAP_CHUNK_KSYMS;
	recs[1].ksyms.count = 2;
	recs[1].ksyms.syms = s11_syms_a;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 1;
	recs[2].procs.procs = s11_procs;
	recs[3].type = CAP_CHUNK_OBJECTS;
	recs[3].objects.count = 3;
	recs[3].objects.objs = s11_objects;
	recs[4].type = CAP_CHUNK_PERFMAP;
	recs[4].perfmap.pid = 3100;
	recs[4].perfmap.start_time = 123000000ull;
	recs[4].perfmap.count = 3;
	recs[4].perfmap.syms = s11_jit;
	recs[5].type = CAP_CHUNK_INTERVAL;
	recs[5].interval.seq = 0;
	recs[5].interval.start_ns = 5000000000ull;
	recs[5].interval.end_ns = 6000000000ull;
	recs[5].interval.nkstacks = 1;
	recs[5].interval.kstacks = s11_kstacks;
	recs[5].interval.nustacks = 2;
	recs[5].interval.ustacks = s11_ustacks;
	recs[5].interval.nrows = 2;
	recs[5].interval.rows = s11_count_rows;
	recs[6].type = CAP_CHUNK_EVENTS;
	recs[6].interval.seq = 1;
	recs[6].interval.start_ns = 6000000000ull;
	recs[6].interval.end_ns = 7000000000ull;
	recs[6].interval.nkstacks = 1;
	recs[6].interval.kstacks = s11_kstacks;
	recs[6].interval.nustacks = 2;
	recs[6].interval.ustacks = s11_ustacks;
	recs[6].interval.nrows = 3;
	recs[6].interval.rows = s11_event_rows;
	recs[7].type = CAP_CHUNK_LOSSES;
	recs[7].losses.interval_seq = 1;
	recs[7].losses.counts[CAP_LOSS_USTACK_MISSING] = 1;
	recs[7].losses.counts[CAP_LOSS_EVENTS_DROPPED] = 1000012;
	recs[7].losses.ncpus = 4;
	recs[7].losses.cpu_dropped = s11_cpu_dropped;
	recs[8].type = CAP_CHUNK_KSYMS;
	recs[8].ksyms.count = 3;
	recs[8].ksyms.syms = s11_syms_b;
	recs[9].type = CAP_CHUNK_END;
	recs[9].end.nintervals = 2;
	recs[9].end.end_ns = 7000000001ull;
	recs[9].end.events = 250015;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V1_1_H */
