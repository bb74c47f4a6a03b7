/* SPDX-License-Identifier: MIT */
/*
 * samples_v2_2.h: a capture of format 2.2 with known values: a split interval (format.md 3.2,
 * the rule 2.2 added). Process 2200 runs /usr/bin/launcher, which execs /usr/bin/worker during
 * interval 0, so interval 0 is two INTERVAL chunks with one seq, start and end: the first after
 * the PROCS record of the old image and holding the rows that ran in it, the second after the
 * PROCS record of the new image (same pid and start_time, another exe, comm and mappings) and
 * holding the rows of the same pid that ran in that one. Both parts carry the interval's whole
 * stack tables. Interval 1 is one chunk, so the capture holds 2 intervals in 3 chunks.
 *
 * FROZEN: tests/format/compat/v2.2.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V2_2_H
#define STK_TESTS_FORMAT_SAMPLES_V2_2_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s22_kv[] = {
	{ "host", "build-22" },
	{ "kernel", "6.1.0-42-amd64" },
	{ "arch", "x86_64" },
	{ "ncpus", "2" },
	{ "mode", "count" },
	{ "weight", "count" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "unwind", "fp" },
	{ "clock.mono_ns", "22000000000" },
	{ "clock.real_ns", "1800000000000000000" },
	{ "start.mono_ns", "22000000000" },
};

static struct cap_probe s22_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_TRACEPOINT, .nattached = 1,
	  .spec = "t:syscalls:sys_enter_getppid" },
};

static struct cap_ksym s22_ksyms[] = {
	{ .addr = 0xffffffff81000100ull, .size = 0x80, .name = "do_syscall_64" },
	{ .addr = 0xffffffff81000180ull, .size = 0x40, .name = "entry_SYSCALL_64_after_hwframe" },
};

/* the image before the exec */
static struct cap_mapping s22_maps_old[] = {
	{ .start = 0x555555555000ull, .end = 0x555555556000ull, .pgoff = 0x1000, .dev = 0x803,
	  .inode = 2201, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x22, 0x01, 0x22, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/launcher" },
};

/* the image after it: the same pid, another program at other addresses */
static struct cap_mapping s22_maps_new[] = {
	{ .start = 0x5555deadb000ull, .end = 0x5555deadd000ull, .pgoff = 0x2000, .dev = 0x803,
	  .inode = 2202, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x22, 0x02, 0x22, 0x02, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x02 },
	  .path = "/usr/bin/worker" },
};

static struct cap_process s22_procs_old[] = {
	{ .pid = 2200, .flags = 0, .start_time = 21500000000ull, .comm = "launcher",
	  .exe = "/usr/bin/launcher", .nmaps = 1, .maps = s22_maps_old },
};

static struct cap_process s22_procs_new[] = {
	{ .pid = 2200, .flags = 0, .start_time = 21500000000ull, .comm = "worker",
	  .exe = "/usr/bin/worker", .nmaps = 1, .maps = s22_maps_new },
};

static uint64_t s22_k0[] = { 0xffffffff81000150ull, 0xffffffff81000190ull };
static uint64_t s22_u_old[] = { 0x555555555120ull, 0x555555555210ull };	/* in launcher */
static uint64_t s22_u_new[] = { 0x5555deadb340ull, 0x5555deadc010ull };	/* in worker */

static struct cap_stack s22_kstacks[] = {
	{ .flags = 0, .nips = 2, .ips = s22_k0 },
};

/* every part carries the interval's whole tables (format.md 3.2) */
static struct cap_stack s22_ustacks[] = {
	{ .flags = 0, .nips = 2, .ips = s22_u_old },
	{ .flags = 0, .nips = 2, .ips = s22_u_new },
};

/* interval 0, first part: rows that ran in launcher */
static struct cap_row s22_rows_a[] = {
	{ .probe = 0, .pid = 2200, .tid = 2200, .comm = "launcher", .kstack = 1, .ustack = 1,
	  .count = 3 },
};

/* interval 0, second part: rows of the same pid that ran in worker */
static struct cap_row s22_rows_b[] = {
	{ .probe = 0, .pid = 2200, .tid = 2200, .comm = "worker", .kstack = 1, .ustack = 2,
	  .count = 5 },
	{ .probe = 0, .pid = 2200, .tid = 2201, .comm = "worker", .kstack = 1, .ustack = 0,
	  .count = 2 },
};

/* interval 1, whole: worker only */
static struct cap_stack s22_ustacks_1[] = {
	{ .flags = 0, .nips = 2, .ips = s22_u_new },
};

static struct cap_row s22_rows_1[] = {
	{ .probe = 0, .pid = 2200, .tid = 2200, .comm = "worker", .kstack = 1, .ustack = 1,
	  .count = 7 },
};

enum { SAMPLE22_NRECORDS = 10 };

static inline void sample22_interval(struct cap_record *rec, uint32_t seq, struct cap_stack *us,
				     uint32_t nus, struct cap_row *rows, uint32_t nrows)
{
	rec->type = CAP_CHUNK_INTERVAL;
	rec->interval.seq = seq;
	rec->interval.start_ns = 22000000000ull + seq * 1000000000ull;
	rec->interval.end_ns = 23000000000ull + seq * 1000000000ull;
	rec->interval.nkstacks = 1;
	rec->interval.kstacks = s22_kstacks;
	rec->interval.nustacks = nus;
	rec->interval.ustacks = us;
	rec->interval.nrows = nrows;
	rec->interval.rows = rows;
}

/*
 * Fills recs[0..9]: META, KSYMS_ADD, PROCS (launcher), INTERVAL 0 (first part), PROCS (worker),
 * INTERVAL 0 (second part), LOSSES 0, INTERVAL 1, LOSSES 1, END.
 */
static inline void sample22_records(struct cap_record recs[SAMPLE22_NRECORDS])
{
	memset(recs, 0, SAMPLE22_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s22_kv) / sizeof(s22_kv[0]);
	recs[0].meta.kv = s22_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s22_probes;
	recs[1].type = CAP_CHUNK_KSYMS_ADD;
	recs[1].ksyms.count = 2;
	recs[1].ksyms.syms = s22_ksyms;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 1;
	recs[2].procs.procs = s22_procs_old;
	sample22_interval(&recs[3], 0, s22_ustacks, 2, s22_rows_a, 1);
	recs[4].type = CAP_CHUNK_PROCS;
	recs[4].procs.count = 1;
	recs[4].procs.procs = s22_procs_new;
	sample22_interval(&recs[5], 0, s22_ustacks, 2, s22_rows_b, 2);
	recs[6].type = CAP_CHUNK_LOSSES;
	recs[6].losses.interval_seq = 0;
	sample22_interval(&recs[7], 1, s22_ustacks_1, 1, s22_rows_1, 1);
	recs[8].type = CAP_CHUNK_LOSSES;
	recs[8].losses.interval_seq = 1;
	recs[8].losses.counts[CAP_LOSS_USTACK_MISSING] = 1;
	recs[9].type = CAP_CHUNK_END;
	recs[9].end.nintervals = 2;
	recs[9].end.end_ns = 24000000001ull;
	recs[9].end.events = 17;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V2_2_H */
