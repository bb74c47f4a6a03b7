/* SPDX-License-Identifier: MIT */
/*
 * samples_v4_1.h: a capture of format 4.1 with known values: CODES records (format.md 4.11) and
 * the interpreter frames of user stacks that name them, in a file that holds each stack once
 * (4.0, format.md 4.4). The code objects hold line runs going forward and back, a run with no
 * line (0), a start delta of two varint bytes and a line delta of three, a UTF-8 qualified
 * name, an entry of every reason without names, and an id past 2^31 (a five-byte varint);
 * frame offsets include none (0xFFFFFF) and one of 24 bits. Interval 1 uses U0 again (brought by
 * interval 0, named by the first CODES record) and brings U2, whose new code object the second
 * CODES record, before it, names. The LOSSES records count every kind 4.1 added (22 to 29), the
 * meta says python_frames.
 *
 * FROZEN: tests/format/compat/v4.1.stk was written from these values by tests/tools/mkcompat and
 * test_compat checks that file against them. Never change them, never regenerate the file; a
 * new format version adds its own sample set and compat file (docs/format.md 5).
 */
#ifndef STK_TESTS_FORMAT_SAMPLES_V4_1_H
#define STK_TESTS_FORMAT_SAMPLES_V4_1_H

#include <string.h>

#include "stk/capture.h"

static struct cap_kv s41_kv[] = {
	{ "host", "build-41" },
	{ "kernel", "6.1.0-43-amd64" },
	{ "arch", "x86_64" },
	{ "ncpus", "2" },
	{ "mode", "profile" },
	{ "weight", "count" },
	{ "freq_hz", "99" },
	{ "kallsyms", "hits" },
	{ "objects", "symtabs" },
	{ "unwind", "auto" },
	{ "python_frames", "python" },
	{ "clock.mono_ns", "31000000000" },
	{ "clock.real_ns", "1800000000000000000" },
	{ "start.mono_ns", "31000000000" },
};

static struct cap_probe s41_probes[] = {
	{ .id = 0, .kind = CAP_PROBE_SAMPLE, .nattached = 2, .spec = "cpu-clock" },
};

static struct cap_ksym s41_ksyms[] = {
	{ .addr = 0xffffffff81000200ull, .size = 0x40, .name = "asm_exc_page_fault" },
};

static struct cap_mapping s41_maps[] = {
	{ .start = 0x555555600000ull, .end = 0x555555900000ull, .pgoff = 0x6f000, .dev = 0x803,
	  .inode = 3101, .kind = CAP_MAP_FILE, .flags = 0, .build_id_len = 20,
	  .build_id = { 0x31, 0x01, 0x31, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/python3.11" },
};

static struct cap_process s41_procs[] = {
	{ .pid = 3100, .flags = 0, .start_time = 30500000000ull, .comm = "python3",
	  .exe = "/usr/bin/python3.11", .nmaps = 1, .maps = s41_maps },
};

static struct cap_segment s41_segs[] = {
	{ .offset = 0x6f000, .vaddr = 0x46f000, .filesz = 0x300000, .memsz = 0x300000 },
};

static struct cap_symbol s41_syms[] = {
	{ .addr = 0x470000, .size = 0x40, .name = "Py_BytesMain" },
	{ .addr = 0x501f40, .size = 0xf125, .name = "_PyEval_EvalFrameDefault" },
	{ .addr = 0x560000, .size = 0x200, .name = "builtin_sorted" },
};

static struct cap_object s41_objects[] = {
	{ .flags = CAP_OBJ_F_SYMTAB, .build_id_len = 20,
	  .build_id = { 0x31, 0x01, 0x31, 0x01, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 },
	  .path = "/usr/bin/python3.11", .debuglink = "", .nsegs = 1, .segs = s41_segs,
	  .nsyms = 3, .syms = s41_syms },
};

/* <module>: from line 1 to 40, back to 12, a run with no line, then 40 again */
static struct cap_code_line s41_lines_module[] = {
	{ 0, 1 }, { 4, 40 }, { 9, 12 }, { 10, 0 }, { 300, 40 },
};

/* the lambda: a line delta of three varint bytes (zigzag 2 * 70000) */
static struct cap_code_line s41_lines_lambda[] = {
	{ 0, 62 }, { 2, 70062 },
};

static struct cap_code s41_codes[] = {
	{ .id = 1, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_NAMED, .addr = 0x7f3a12345670ull,
	  .name = "<module>", .file = "/srv/app/main.py", .firstline = 1, .nlines = 5,
	  .lines = s41_lines_module },
	{ .id = 2, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_NAMED, .addr = 0x7f3a12345a30ull,
	  .name = "Worker.handle.<locals>.<lambda>", .file = "/srv/app/main.py", .firstline = 62,
	  .nlines = 2, .lines = s41_lines_lambda },
	{ .id = 3, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_NAMED, .addr = 0x7f3a12345e10ull,
	  .name = "Grüße.grüß", .file = "<frozen importlib._bootstrap>", .firstline = 1178 },
	{ .id = 4, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_GONE, .addr = 0x7f3a12346000ull },
	{ .id = 5, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_CHANGED, .addr = 0x7f3a12346100ull },
	{ .id = 6, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_UNREADABLE,
	  .addr = 0x7f3a12346200ull },
	{ .id = 0x80000001u, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_FULL },
};

/* the second CODES record: a code object met first in interval 1 */
static struct cap_code_line s41_lines_spin[] = {
	{ 0, 7 }, { 6, 8 },
};

static struct cap_code s41_codes_1[] = {
	{ .id = 8, .lang = CAP_LANG_PYTHON, .reason = CAP_CODE_NAMED, .addr = 0x7f3a12347000ull,
	  .name = "spin", .file = "/srv/app/main.py", .firstline = 7, .nlines = 2,
	  .lines = s41_lines_spin },
};

static uint64_t s41_k0[] = { 0xffffffff81000210ull };
/*
 * keyfn-like lambda (id 2, offset 3) and <module> (id 1, offset 300) after the interpreter's
 * frame that runs them, a native leaf before, the interpreter's caller after
 */
static uint64_t s41_u0[] = { 0x5555556f1000ull, 0x555555693f60ull,
			     CAP_CODE_FRAME(2, 3), CAP_CODE_FRAME(1, 300), 0x555555601010ull };
/* frames without names, an offset of none and one of 24 bits, the id past 2^31 */
static uint64_t s41_u1[] = { 0x555555693f50ull, CAP_CODE_FRAME(3, CAP_CODE_OFF_NONE),
			     CAP_CODE_FRAME(5, 0xfffffe), CAP_CODE_FRAME(0x80000001u, 0),
			     0x555555601010ull };
/* interval 1's new stack: spin (id 8) called by <module> (id 1) */
static uint64_t s41_u2[] = { 0x555555693f60ull, CAP_CODE_FRAME(8, 6), CAP_CODE_FRAME(1, 4),
			     0x555555601010ull };

static struct cap_stack s41_kstacks[] = {
	{ .flags = 0, .nips = 1, .ips = s41_k0 },
};

static struct cap_stack s41_ustacks[] = {
	{ .flags = 0, .nips = 5, .ips = s41_u0 },
	{ .flags = 0, .nips = 5, .ips = s41_u1 },
};

/* interval 1's tables, self-contained as the writer is given them: U2, then U0 again */
static struct cap_stack s41_ustacks_1[] = {
	{ .flags = 0, .nips = 4, .ips = s41_u2 },
	{ .flags = 0, .nips = 5, .ips = s41_u0 },
};

static struct cap_row s41_rows[] = {
	{ .probe = 0, .pid = 3100, .tid = 3100, .comm = "python3", .kstack = 1, .ustack = 1,
	  .count = 31 },
	{ .probe = 0, .pid = 3100, .tid = 3102, .comm = "python3", .kstack = 0, .ustack = 2,
	  .count = 4 },
};

static struct cap_row s41_rows_1[] = {
	{ .probe = 0, .pid = 3100, .tid = 3100, .comm = "python3", .kstack = 0, .ustack = 2,
	  .count = 9 },
	{ .probe = 0, .pid = 3100, .tid = 3102, .comm = "python3", .kstack = 0, .ustack = 1,
	  .count = 5 },
};

enum { SAMPLE41_NRECORDS = 11 };

/* The records of recs[] that are INTERVAL chunks, and the stacks each brings to the file. */
static const uint32_t sample41_new_k[] = { 1, 0 };
static const uint32_t sample41_new_u[] = { 2, 1 };

/*
 * Fills recs[0..10]: META, KSYMS_ADD, PROCS, OBJECTS, CODES, INTERVAL 0, LOSSES 0, CODES,
 * INTERVAL 1, LOSSES 1, END.
 */
static inline void sample41_records(struct cap_record recs[SAMPLE41_NRECORDS])
{
	memset(recs, 0, SAMPLE41_NRECORDS * sizeof(*recs));
	recs[0].type = CAP_CHUNK_META;
	recs[0].meta.nkv = sizeof(s41_kv) / sizeof(s41_kv[0]);
	recs[0].meta.kv = s41_kv;
	recs[0].meta.nprobes = 1;
	recs[0].meta.probes = s41_probes;
	recs[1].type = CAP_CHUNK_KSYMS_ADD;
	recs[1].ksyms.count = 1;
	recs[1].ksyms.syms = s41_ksyms;
	recs[2].type = CAP_CHUNK_PROCS;
	recs[2].procs.count = 1;
	recs[2].procs.procs = s41_procs;
	recs[3].type = CAP_CHUNK_OBJECTS;
	recs[3].objects.count = 1;
	recs[3].objects.objs = s41_objects;
	recs[4].type = CAP_CHUNK_CODES;
	recs[4].codes.count = sizeof(s41_codes) / sizeof(s41_codes[0]);
	recs[4].codes.codes = s41_codes;
	recs[5].type = CAP_CHUNK_INTERVAL;
	recs[5].interval.seq = 0;
	recs[5].interval.start_ns = 31000000000ull;
	recs[5].interval.end_ns = 32000000000ull;
	recs[5].interval.nkstacks = 1;
	recs[5].interval.kstacks = s41_kstacks;
	recs[5].interval.nustacks = 2;
	recs[5].interval.ustacks = s41_ustacks;
	recs[5].interval.nrows = 2;
	recs[5].interval.rows = s41_rows;
	recs[6].type = CAP_CHUNK_LOSSES;
	recs[6].losses.interval_seq = 0;
	for (int k = CAP_LOSS_PY_VERSION; k <= CAP_LOSS_PY_NAMES_FULL; k++)
		recs[6].losses.counts[k] = 100 + k;
	recs[7].type = CAP_CHUNK_CODES;
	recs[7].codes.count = 1;
	recs[7].codes.codes = s41_codes_1;
	recs[8].type = CAP_CHUNK_INTERVAL;
	recs[8].interval.seq = 1;
	recs[8].interval.start_ns = 32000000000ull;
	recs[8].interval.end_ns = 33000000000ull;
	recs[8].interval.nustacks = 2;
	recs[8].interval.ustacks = s41_ustacks_1;
	recs[8].interval.nrows = 2;
	recs[8].interval.rows = s41_rows_1;
	recs[9].type = CAP_CHUNK_LOSSES;
	recs[9].losses.interval_seq = 1;
	recs[9].losses.counts[CAP_LOSS_PY_TRUNCATED] = 2;
	recs[10].type = CAP_CHUNK_END;
	recs[10].end.nintervals = 2;
	recs[10].end.end_ns = 33000000001ull;
	recs[10].end.events = 49;
}

#endif /* STK_TESTS_FORMAT_SAMPLES_V4_1_H */
