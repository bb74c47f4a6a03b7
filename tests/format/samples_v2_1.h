/* SPDX-License-Identifier: MIT */
/*
 * samples_v2_1.h: a capture of format 2.1 with known values: the OBJECTS record of a stripped
 * library whose symbols are the union of its .dynsym and its debug file's .symtab (the
 * DEBUGFILE flag 2.1 added, with SYMTAB and DYNSYM), local functions only the debug file names
 * and a name with a symbol version among them; the record of a whole stripped object whose
 * record adds its debug file's symbols; then the rows that hit them.
 *
 * FROZEN: tests/format/compat/v2.1.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V2_1_H
#define STK_TESTS_FORMAT_SAMPLES_V2_1_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s21_kv[] = {
	{ "host", "build-21" },
	{ "kernel", "6.1.0-41-amd64" },
	{ "arch", "x86_64" },
	{ "mode", "count" },
	{ "weight", "count" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "unwind", "auto" },
	{ "clock.mono_ns", "21000000000" },
	{ "clock.real_ns", "1800000000000000000" },
};

static struct cap_probe s21_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_TRACEPOINT, .nattached = 1,
	  .spec = "t:syscalls:sys_enter_clock_nanosleep" },
};

static struct cap_ksym s21_ksyms[] = {
	{ .addr = 0xffffffff81000100ull, .size = 0x80, .name = "do_syscall_64" },
	{ .addr = 0xffffffff81000180ull, .size = 0x40, .name = "entry_SYSCALL_64_after_hwframe" },
};

static struct cap_mapping s21_maps[] = {
	{ .start = 0x555555555000ull, .end = 0x555555556000ull, .pgoff = 0x1000, .dev = 0x803,
	  .inode = 2101, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x21, 0x21, 0x21, 0x21, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/sleeper" },
	{ .start = 0x7ffff7c00000ull, .end = 0x7ffff7dbb000ull, .pgoff = 0, .dev = 0x803,
	  .inode = 2102, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1, 0x39, 0x6f, 0x9f, 0xbd, 0x35,
			0x0e, 0x31, 0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40 },
	  .path = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
};

static struct cap_process s21_procs[] = {
	{ .pid = 2100, .flags = 0, .start_time = 20000000000ull, .comm = "sleeper",
	  .exe = "/usr/bin/sleeper", .nmaps = 2, .maps = s21_maps },
};

static struct cap_segment s21_segs_libc[] = {
	{ .offset = 0, .vaddr = 0, .filesz = 0x26000, .memsz = 0x26000 },
	{ .offset = 0x26000, .vaddr = 0x26000, .filesz = 0x195000, .memsz = 0x195000 },
};

/* .dynsym and the debug file's .symtab, one symbol per address (format.md 4.8) */
static struct cap_symbol s21_syms_libc[] = {
	{ .addr = 0x271d0, .size = 0xac, .name = "__libc_start_call_main" },
	{ .addr = 0x27280, .size = 0x141, .name = "__libc_start_main" },
	{ .addr = 0x88ef0, .size = 0x48e, .name = "start_thread" },
	{ .addr = 0xcf4e0, .size = 0x86, .name = "clock_nanosleep@GLIBC_2.2.5" },
	{ .addr = 0xd3e40, .size = 0x31, .name = "__nanosleep" },
};

static struct cap_segment s21_segs_exe[] = {
	{ .offset = 0x1000, .vaddr = 0x1000, .filesz = 0x1000, .memsz = 0x1000 },
};

static struct cap_symbol s21_syms_exe[] = {
	{ .addr = 0x1100, .size = 0x20, .name = "main" },
	{ .addr = 0x1120, .size = 0x30, .name = "nap" },
};

/* "whole file" bytes of the stripped executable: an ELF header's first bytes, then some */
static uint8_t s21_data_exe[32] = {
	0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	3, 0, 0x3e, 0, 1, 0, 0, 0, 0x21, 0x02, 0x00, 0xff, 0xee, 0, 0, 0x21,
};

static struct cap_object s21_objects[] = {
	{ .flags = CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DYNSYM | CAP_OBJ_F_DEBUGFILE, .build_id_len = 20,
	  .build_id = { 0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1, 0x39, 0x6f, 0x9f, 0xbd, 0x35,
			0x0e, 0x31, 0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40 },
	  .path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	  .debuglink = "ac61ec5a8eb1396f9fbd350e3169a558528a40.debug", .nsegs = 2,
	  .segs = s21_segs_libc, .nsyms = 5, .syms = s21_syms_libc, .data_len = 0, .data = NULL },
	{ .flags = CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DYNSYM | CAP_OBJ_F_DEBUGFILE | CAP_OBJ_F_WHOLE,
	  .build_id_len = 20,
	  .build_id = { 0x21, 0x21, 0x21, 0x21, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/sleeper", .debuglink = "sleeper.debug", .nsegs = 1,
	  .segs = s21_segs_exe, .nsyms = 2, .syms = s21_syms_exe, .data_len = 32,
	  .data = s21_data_exe },
};

static uint64_t s21_k0[] = { 0xffffffff81000150ull, 0xffffffff81000190ull };
/* clock_nanosleep <- nap <- main <- __libc_start_call_main <- __libc_start_main */
static uint64_t s21_u0[] = { 0x7ffff7ccf4f0ull, 0x555555555130ull, 0x555555555110ull,
			     0x7ffff7c27200ull, 0x7ffff7c272c0ull };

static struct cap_stack s21_kstacks[] = {
	{ .flags = 0, .nips = 2, .ips = s21_k0 },
};

static struct cap_stack s21_ustacks[] = {
	{ .flags = 0, .nips = 5, .ips = s21_u0 },
};

static struct cap_row s21_rows[] = {
	{ .probe = 0, .pid = 2100, .tid = 2100, .comm = "sleeper", .kstack = 1, .ustack = 1,
	  .count = 21 },
};

enum { SAMPLE21_NRECORDS = 7 };

/* Fills recs[0..6]: META, KSYMS_ADD, PROCS, OBJECTS, INTERVAL, LOSSES, END. */
static inline void sample21_records(struct cap_record recs[SAMPLE21_NRECORDS])
{
	memset(recs, 0, SAMPLE21_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s21_kv) / sizeof(s21_kv[0]);
	recs[0].meta.kv = s21_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s21_probes;
	recs[1].type = CAP_CHUNK_KSYMS_ADD;
	recs[1].ksyms.count = 2;
	recs[1].ksyms.syms = s21_ksyms;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 1;
	recs[2].procs.procs = s21_procs;
	recs[3].type = CAP_CHUNK_OBJECTS;
	recs[3].objects.count = 2;
	recs[3].objects.objs = s21_objects;
	recs[4].type = CAP_CHUNK_INTERVAL;
	recs[4].interval.seq = 0;
	recs[4].interval.start_ns = 21000000000ull;
	recs[4].interval.end_ns = 22000000000ull;
	recs[4].interval.nkstacks = 1;
	recs[4].interval.kstacks = s21_kstacks;
	recs[4].interval.nustacks = 1;
	recs[4].interval.ustacks = s21_ustacks;
	recs[4].interval.nrows = 1;
	recs[4].interval.rows = s21_rows;
	recs[5].type = CAP_CHUNK_LOSSES;
	recs[5].losses.interval_seq = 0;
	recs[6].type = CAP_CHUNK_END;
	recs[6].end.nintervals = 1;
	recs[6].end.end_ns = 22000000001ull;
	recs[6].end.events = 21;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V2_1_H */
