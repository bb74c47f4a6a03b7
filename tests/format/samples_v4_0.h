/* SPDX-License-Identifier: MIT */
/*
 * samples_v4_0.h: a capture of format 4.0 with known values: stacks written once per file
 * (format.md 4.4). The records below are what a writer is given, each interval self-contained;
 * the file holds each stack once, in the first chunk whose rows use it, and rows refer to the
 * file's stacks (kernel and user numbered apart, from 1):
 *
 *   interval 0   tables K0 K1 | U0 U1 U2 (U2 used by no row)   writes K0 K1 | U0 U1
 *   interval 1   tables K1 | U3 U0 U0t (U0t: U0's frames, TRUNCATED)  writes - | U3 U0t
 *   interval 2   split (pid 4000 execs from launcher to worker, format.md 3.2), both parts
 *                with the tables K0 | U1 U4: part 1 (launcher) writes nothing, part 2 (worker)
 *                writes U4
 *
 * so the file's kernel stacks are K0 K1 and its user stacks U0 U1 U3 U0t U4 (literals in
 * sample40_file_*). Process 4001 is there to make rows of one interval use stacks of two others.
 *
 * FROZEN: tests/format/compat/v4.0.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V4_0_H
#define STK_TESTS_FORMAT_SAMPLES_V4_0_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s40_kv[] = {
	{ "host", "build-40" },
	{ "kernel", "6.1.0-44-amd64" },
	{ "arch", "x86_64" },
	{ "ncpus", "2" },
	{ "mode", "count" },
	{ "weight", "count" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "unwind", "auto" },
	{ "clock.mono_ns", "40000000000" },
	{ "clock.real_ns", "1800000000000000000" },
	{ "start.mono_ns", "40000000000" },
};

static struct cap_probe s40_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_TRACEPOINT, .nattached = 1,
	  .spec = "t:syscalls:sys_enter_getppid" },
};

static struct cap_ksym s40_ksyms[] = {
	{ .addr = 0xffffffff81000100ull, .size = 0x80, .name = "do_syscall_64" },
	{ .addr = 0xffffffff81000180ull, .size = 0x40, .name = "entry_SYSCALL_64_after_hwframe" },
	{ .addr = 0xffffffff81200000ull, .size = 0x100, .name = "__x64_sys_getppid" },
};

static struct cap_mapping s40_maps_launcher[] = {
	{ .start = 0x555555555000ull, .end = 0x555555556000ull, .pgoff = 0x1000, .dev = 0x803,
	  .inode = 4001, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x40, 0x01, 0x40, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/launcher" },
};

static struct cap_mapping s40_maps_worker[] = {
	{ .start = 0x5555deadb000ull, .end = 0x5555deadd000ull, .pgoff = 0x2000, .dev = 0x803,
	  .inode = 4002, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x40, 0x02, 0x40, 0x02, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x02 },
	  .path = "/usr/bin/worker" },
};

/* launcher (pid 4000, before its exec) and a second launcher, pid 4001 */
static struct cap_process s40_procs_launcher[] = {
	{ .pid = 4000, .flags = 0, .start_time = 39500000000ull, .comm = "launcher",
	  .exe = "/usr/bin/launcher", .nmaps = 1, .maps = s40_maps_launcher },
	{ .pid = 4001, .flags = 0, .start_time = 39600000000ull, .comm = "launcher",
	  .exe = "/usr/bin/launcher", .nmaps = 1, .maps = s40_maps_launcher },
};

static struct cap_process s40_procs_worker[] = {
	{ .pid = 4000, .flags = 0, .start_time = 39500000000ull, .comm = "worker",
	  .exe = "/usr/bin/worker", .nmaps = 1, .maps = s40_maps_worker },
};

static uint64_t s40_k0[] = { 0xffffffff81200010ull, 0xffffffff81000150ull,
			     0xffffffff81000190ull };
static uint64_t s40_k1[] = { 0xffffffff81000150ull, 0xffffffff81000190ull };
static uint64_t s40_u0[] = { 0x555555555120ull, 0x555555555210ull };
static uint64_t s40_u1[] = { 0x555555555300ull, 0x555555555210ull };
static uint64_t s40_u2[] = { 0x555555555400ull };
static uint64_t s40_u3[] = { 0x555555555500ull, 0x555555555120ull, 0x555555555210ull };
static uint64_t s40_u4[] = { 0x5555deadb340ull, 0x5555deadc010ull };

#define S40_STACK(v, f) { .flags = (f), .nips = sizeof(v) / sizeof((v)[0]), .ips = (v) }

static struct cap_stack s40_k_iv0[] = { S40_STACK(s40_k0, 0), S40_STACK(s40_k1, 0) };
static struct cap_stack s40_u_iv0[] = { S40_STACK(s40_u0, 0), S40_STACK(s40_u1, 0),
					S40_STACK(s40_u2, 0) };
static struct cap_row s40_rows_0[] = {
	{ .probe = 0, .pid = 4000, .tid = 4000, .comm = "launcher", .kstack = 1, .ustack = 1,
	  .count = 10 },
	{ .probe = 0, .pid = 4001, .tid = 4001, .comm = "launcher", .kstack = 2, .ustack = 2,
	  .count = 4 },
	{ .probe = 0, .pid = 4000, .tid = 4002, .comm = "launcher", .kstack = 1, .ustack = 0,
	  .flags = CAP_ROW_F_USTACK_LOST, .count = 1 },
};

static struct cap_stack s40_k_iv1[] = { S40_STACK(s40_k1, 0) };
static struct cap_stack s40_u_iv1[] = { S40_STACK(s40_u3, 0), S40_STACK(s40_u0, 0),
					S40_STACK(s40_u0, CAP_STACK_F_TRUNCATED) };
static struct cap_row s40_rows_1[] = {
	{ .probe = 0, .pid = 4000, .tid = 4000, .comm = "launcher", .kstack = 1, .ustack = 2,
	  .count = 6 },
	{ .probe = 0, .pid = 4001, .tid = 4001, .comm = "launcher", .kstack = 0, .ustack = 1,
	  .count = 2 },
	{ .probe = 0, .pid = 4001, .tid = 4001, .comm = "launcher", .kstack = 1, .ustack = 3,
	  .count = 3 },
};

/* interval 2: both parts carry the interval's tables, as stkrec writes them */
static struct cap_stack s40_k_iv2[] = { S40_STACK(s40_k0, 0) };
static struct cap_stack s40_u_iv2[] = { S40_STACK(s40_u1, 0), S40_STACK(s40_u4, 0) };
static struct cap_row s40_rows_2a[] = {
	{ .probe = 0, .pid = 4000, .tid = 4000, .comm = "launcher", .kstack = 1, .ustack = 1,
	  .count = 5 },
};
static struct cap_row s40_rows_2b[] = {
	{ .probe = 0, .pid = 4000, .tid = 4000, .comm = "worker", .kstack = 1, .ustack = 2,
	  .count = 8 },
	{ .probe = 0, .pid = 4001, .tid = 4001, .comm = "launcher", .kstack = 1, .ustack = 1,
	  .count = 1 },
};

#undef S40_STACK

enum { SAMPLE40_NRECORDS = 13 };
/* The records of recs[] that are INTERVAL chunks, and the stacks each brings to the file. */
static const int sample40_intervals[] = { 3, 5, 8, 10 };
static const uint32_t sample40_new_k[] = { 2, 0, 0, 0 };
static const uint32_t sample40_new_u[] = { 2, 2, 0, 1 };

static inline void sample40_interval(struct cap_record *rec, uint32_t seq, struct cap_stack *ks,
				     uint32_t nks, struct cap_stack *us, uint32_t nus,
				     struct cap_row *rows, uint32_t nrows)
{
	rec->type = CAP_CHUNK_INTERVAL;
	rec->interval.seq = seq;
	rec->interval.start_ns = 40000000000ull + seq * 1000000000ull;
	rec->interval.end_ns = 41000000000ull + seq * 1000000000ull;
	rec->interval.nkstacks = nks;
	rec->interval.kstacks = ks;
	rec->interval.nustacks = nus;
	rec->interval.ustacks = us;
	rec->interval.nrows = nrows;
	rec->interval.rows = rows;
}

/*
 * Fills recs[0..12]: META, KSYMS_ADD, PROCS (launchers), INTERVAL 0, LOSSES 0, INTERVAL 1,
 * LOSSES 1, PROCS (launchers again: the split's first image), INTERVAL 2 (first part), PROCS
 * (worker), INTERVAL 2 (second part), LOSSES 2, END.
 */
static inline void sample40_records(struct cap_record recs[SAMPLE40_NRECORDS])
{
	memset(recs, 0, SAMPLE40_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s40_kv) / sizeof(s40_kv[0]);
	recs[0].meta.kv = s40_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s40_probes;
	recs[1].type = CAP_CHUNK_KSYMS_ADD;
	recs[1].ksyms.count = 3;
	recs[1].ksyms.syms = s40_ksyms;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 2;
	recs[2].procs.procs = s40_procs_launcher;
	sample40_interval(&recs[3], 0, s40_k_iv0, 2, s40_u_iv0, 3, s40_rows_0, 3);
	recs[4].type = CAP_CHUNK_LOSSES;
	recs[4].losses.interval_seq = 0;
	sample40_interval(&recs[5], 1, s40_k_iv1, 1, s40_u_iv1, 3, s40_rows_1, 3);
	recs[6].type = CAP_CHUNK_LOSSES;
	recs[6].losses.interval_seq = 1;
	recs[6].losses.counts[CAP_LOSS_USTACK_TRUNCATED] = 3;
	recs[7].type = CAP_CHUNK_PROCS;
	recs[7].procs.count = 1;
	recs[7].procs.procs = s40_procs_launcher;
	sample40_interval(&recs[8], 2, s40_k_iv2, 1, s40_u_iv2, 2, s40_rows_2a, 1);
	recs[9].type = CAP_CHUNK_PROCS;
	recs[9].procs.count = 1;
	recs[9].procs.procs = s40_procs_worker;
	sample40_interval(&recs[10], 2, s40_k_iv2, 1, s40_u_iv2, 2, s40_rows_2b, 2);
	recs[11].type = CAP_CHUNK_LOSSES;
	recs[11].losses.interval_seq = 2;
	recs[12].type = CAP_CHUNK_END;
	recs[12].end.nintervals = 3;
	recs[12].end.end_ns = 43000000001ull;
	recs[12].end.events = 40;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V4_0_H */
