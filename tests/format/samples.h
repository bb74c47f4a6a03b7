/* SPDX-License-Identifier: MIT */
/*
 * samples.h: one record of each type with known values.
 *
 * FROZEN: tests/format/compat/v1.0.stk was written from these values (test_compat --write) and
 * test_compat checks that file against them. Never change them; a new format version adds its
 * own sample set and compat file.
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_H
#define STK_TESTS_FORMAT_SAMPLES_H

#include "stk/capture.h"

static struct cap_kv sample_kv[] = {
	{ "host", "build-01" },
	{ "kernel", "6.1.0-18-amd64" },
	{ "arch", "x86_64" },
	{ "mode", "count" },
	{ "argv", "stkrec -o out.stk t:syscalls:sys_enter_getppid" },
	{ "clock.mono_ns", "123456789012" },
	{ "odd", "tab\there \"quoted\" back\\slash \xff\xfe\x01 caf\xc3\xa9\n" },
	{ "empty", "" },
};

static struct cap_probe sample_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_TRACEPOINT, .nattached = 1,
	  .spec = "t:syscalls:sys_enter_getppid" },
	{ .id = 1, .kind = CAP_PROBE_UPROBE, .nattached = 3, .spec = "c:malloc" },
};

static struct cap_ksym sample_syms[] = {
	{ 0xffffffff81000000ull, "_stext", NULL },
	{ 0xffffffff81001000ull, "do_syscall_64", NULL },
	{ 0xffffffff81001000ull, "do_syscall_64_alias", NULL },
	{ 0xffffffffc0a00000ull, "ext4_readdir", "ext4" },
};

static struct cap_mapping sample_maps[] = {
	{ .start = 0x555555554000ull, .end = 0x555555556000ull, .pgoff = 0x1000, .dev = 0x801,
	  .inode = 1234567, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
			0xff },
	  .path = "/usr/bin/workload" },
	{ .start = 0x7ffff7fc1000ull, .end = 0x7ffff7fc3000ull, .kind = CAP_MAP_VDSO,
	  .flags = CAP_MAP_F_NO_BUILD_ID, .path = "[vdso]" },
	{ .start = 0x7ffff7fd0000ull, .end = 0x7ffff7fd1000ull, .pgoff = 0, .dev = 0x1,
	  .inode = 42, .kind = CAP_MAP_FILE, .flags = CAP_MAP_F_DELETED, .build_id_len = 32,
	  .build_id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
			22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 },
	  .path = "/tmp/old binary" },
};

static struct cap_process sample_procs[] = {
	{ .pid = 4242, .flags = 0, .start_time = 987654321000ull, .comm = "workload",
	  .exe = "/usr/bin/workload", .nmaps = 3, .maps = sample_maps },
	{ .pid = 77, .flags = CAP_PROC_F_NO_MAPS, .start_time = 5, .comm = "gone",
	  .exe = "", .nmaps = 0, .maps = NULL },
};

static uint64_t sample_k0[] = { 0xffffffff81001234ull, 0xffffffff81000010ull };
static uint64_t sample_u0[] = { 0x555555554100ull, 0x555555554200ull, 0x7ffff7fd0010ull };

static struct cap_stack sample_kstacks[] = {
	{ .flags = 0, .nips = 2, .ips = sample_k0 },
};

static struct cap_stack sample_ustacks[] = {
	{ .flags = CAP_STACK_F_TRUNCATED, .nips = 3, .ips = sample_u0 },
	{ .flags = 0, .nips = 0, .ips = NULL },
};

static struct cap_row sample_rows[] = {
	{ .probe = 0, .pid = 4242, .tid = 4243, .flags = 0, .comm = "workload", .kstack = 1,
	  .ustack = 1, .count = 1000 },
	{ .probe = 1, .pid = 4242, .tid = 4242, .flags = CAP_ROW_F_KSTACK_LOST,
	  .comm = "123456789012345", .kstack = 0, .ustack = 2, .count = 0xffffffffffull },
	{ .probe = 0, .pid = 0, .tid = 0, .flags = CAP_ROW_F_USTACK_LOST, .comm = "swapper/0",
	  .kstack = 1, .ustack = 0, .count = 1 },
};

enum { SAMPLE_NRECORDS = 6 };

/* Fills recs[0..5]: META, KSYMS, PROCS, INTERVAL, LOSSES, END. */
static inline void sample_records(struct cap_record recs[SAMPLE_NRECORDS])
{
	memset(recs, 0, SAMPLE_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(sample_kv) / sizeof(sample_kv[0]);
	recs[0].meta.kv = sample_kv;
	recs[0].meta.nprobes = 2;
	recs[0].meta.probes = sample_probes;
	recs[1].type = CAP_CHUNK_KSYMS;
	recs[1].ksyms.flags = 0;
	recs[1].ksyms.count = 4;
	recs[1].ksyms.syms = sample_syms;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 2;
	recs[2].procs.procs = sample_procs;
	recs[3].type = CAP_CHUNK_INTERVAL;
	recs[3].interval.seq = 0;
	recs[3].interval.start_ns = 1000000000ull;
	recs[3].interval.end_ns = 2000000123ull;
	recs[3].interval.nkstacks = 1;
	recs[3].interval.kstacks = sample_kstacks;
	recs[3].interval.nustacks = 2;
	recs[3].interval.ustacks = sample_ustacks;
	recs[3].interval.nrows = 3;
	recs[3].interval.rows = sample_rows;
	recs[4].type = CAP_CHUNK_LOSSES;
	recs[4].losses.interval_seq = 0;
	/* The nine kinds of 1.0 (CAP_LOSS__COUNT has grown since; the values must not). */
	for (unsigned int k = 0; k <= CAP_LOSS_MAPS_UNREAD; k++)
		recs[4].losses.counts[k] = k * 1000 + 7;
	recs[5].type = CAP_CHUNK_END;
	recs[5].end.nintervals = 1;
	recs[5].end.end_ns = 2000000456ull;
	recs[5].end.events = 0xffffffffffull + 1001;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_H */
