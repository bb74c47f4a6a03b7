/* SPDX-License-Identifier: MIT */
/*
 * samples_v2_0.h: a capture of format 2.0 with known values: KSYMS_ADD records (the one record
 * type 2.0 added) before the intervals that need them, one of them replacing a symbol whose
 * range changed, one with the HIDDEN flag and no symbols, a symbol of size 1 and one running to
 * the top of the address space.
 *
 * FROZEN: tests/format/compat/v2.0.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V2_0_H
#define STK_TESTS_FORMAT_SAMPLES_V2_0_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s20_kv[] = {
	{ "host", "build-20" },
	{ "kernel", "6.12.9-amd64" },
	{ "arch", "x86_64" },
	{ "mode", "profile" },
	{ "event", "cpu-clock" },
	{ "weight", "count" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "freq_hz", "49" },
	{ "clock.mono_ns", "9000000000" },
	{ "clock.real_ns", "1798858800000000000" },
};

static struct cap_probe s20_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_SAMPLE, .nattached = 8, .spec = "" },
};

/* What the first interval hits: the last symbol runs to the top of the address space. */
static struct cap_ksym s20_ksyms_a[] = {
	{ .addr = 0xffffffff81000100ull, .size = 0x80, .name = "do_syscall_64" },
	{ .addr = 0xffffffff81000180ull, .size = 1, .name = "entry_SYSCALL_64" },
	{ .addr = 0xffffffff81200000ull, .size = 0x40, .name = "tcp_sendmsg" },
	{ .addr = 0xffffffffc0100000ull, .size = 0x3ff00000ull, .name = "nft_do_chain",
	  .module = "nf_tables" },
};

/* A BPF program loaded above nft_do_chain: its range shrank, it is written again. */
static struct cap_ksym s20_ksyms_b[] = {
	{ .addr = 0xffffffffc0100000ull, .size = 0x2000, .name = "nft_do_chain",
	  .module = "nf_tables" },
	{ .addr = 0xffffffffc0102000ull, .size = 0x3fefe000ull,
	  .name = "bpf_prog_6deef7357e7b4530_on_sample", .module = "bpf" },
};

static struct cap_mapping s20_maps[] = {
	{ .start = 0x555555554000ull, .end = 0x555555556000ull, .pgoff = 0, .dev = 0x803,
	  .inode = 77, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x20, 0x20, 0x20, 0x20, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
			0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0xff },
	  .path = "/usr/bin/curl" },
};

static struct cap_process s20_procs[] = {
	{ .pid = 2000, .flags = 0, .start_time = 8000000000ull, .comm = "curl",
	  .exe = "/usr/bin/curl", .nmaps = 1, .maps = s20_maps },
};

static uint64_t s20_k0[] = { 0xffffffff81200010ull, 0xffffffff81000150ull,
			     0xffffffff81000180ull };
static uint64_t s20_k1[] = { 0xffffffffc0100123ull, 0xffffffff81200020ull };
static uint64_t s20_k2[] = { 0xffffffffc0102040ull, 0xffffffffc0100200ull };
static uint64_t s20_u0[] = { 0x555555554100ull };

static struct cap_stack s20_kstacks_a[] = {
	{ .flags = 0, .nips = 3, .ips = s20_k0 },
	{ .flags = 0, .nips = 2, .ips = s20_k1 },
};

static struct cap_stack s20_kstacks_b[] = {
	{ .flags = 0, .nips = 2, .ips = s20_k2 },
};

static struct cap_stack s20_ustacks[] = {
	{ .flags = 0, .nips = 1, .ips = s20_u0 },
};

static struct cap_row s20_rows_a[] = {
	{ .probe = 0, .pid = 2000, .tid = 2000, .comm = "curl", .kstack = 1, .ustack = 1,
	  .count = 31 },
	{ .probe = 0, .pid = 2000, .tid = 2001, .comm = "curl", .kstack = 2, .ustack = 0,
	  .count = 4 },
};

static struct cap_row s20_rows_b[] = {
	{ .probe = 0, .pid = 2000, .tid = 2000, .comm = "curl", .kstack = 1, .ustack = 1,
	  .count = 9 },
};

enum { SAMPLE20_NRECORDS = 10 };

/*
 * Fills recs[0..9]: META, KSYMS_ADD, PROCS, INTERVAL, LOSSES, KSYMS_ADD (a replacement and a
 * new symbol), INTERVAL, LOSSES, KSYMS_ADD (HIDDEN, no symbols), END.
 */
static inline void sample20_records(struct cap_record recs[SAMPLE20_NRECORDS])
{
	memset(recs, 0, SAMPLE20_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s20_kv) / sizeof(s20_kv[0]);
	recs[0].meta.kv = s20_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s20_probes;
	recs[1].type = CAP_CHUNK_KSYMS_ADD;
	recs[1].ksyms.count = 4;
	recs[1].ksyms.syms = s20_ksyms_a;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 1;
	recs[2].procs.procs = s20_procs;
	recs[3].type = CAP_CHUNK_INTERVAL;
	recs[3].interval.seq = 0;
	recs[3].interval.start_ns = 9000000000ull;
	recs[3].interval.end_ns = 10000000000ull;
	recs[3].interval.nkstacks = 2;
	recs[3].interval.kstacks = s20_kstacks_a;
	recs[3].interval.nustacks = 1;
	recs[3].interval.ustacks = s20_ustacks;
	recs[3].interval.nrows = 2;
	recs[3].interval.rows = s20_rows_a;
	recs[4].type = CAP_CHUNK_LOSSES;
	recs[4].losses.interval_seq = 0;
	recs[4].losses.counts[CAP_LOSS_KSTACK_COLLISION] = 3;
	recs[5].type = CAP_CHUNK_KSYMS_ADD;
	recs[5].ksyms.count = 2;
	recs[5].ksyms.syms = s20_ksyms_b;
	recs[6].type = CAP_CHUNK_INTERVAL;
	recs[6].interval.seq = 1;
	recs[6].interval.start_ns = 10000000000ull;
	recs[6].interval.end_ns = 11000000000ull;
	recs[6].interval.nkstacks = 1;
	recs[6].interval.kstacks = s20_kstacks_b;
	recs[6].interval.nustacks = 1;
	recs[6].interval.ustacks = s20_ustacks;
	recs[6].interval.nrows = 1;
	recs[6].interval.rows = s20_rows_b;
	recs[7].type = CAP_CHUNK_LOSSES;
	recs[7].losses.interval_seq = 1;
	recs[8].type = CAP_CHUNK_KSYMS_ADD;
	recs[8].ksyms.flags = CAP_KSYMS_F_HIDDEN;
	recs[9].type = CAP_CHUNK_END;
	recs[9].end.nintervals = 2;
	recs[9].end.end_ns = 11000000001ull;
	recs[9].end.events = 44;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V2_0_H */
