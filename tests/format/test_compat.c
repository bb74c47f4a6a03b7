/* SPDX-License-Identifier: MIT */
/*
 * test_compat: captures written by released versions stay readable forever. Each file in
 * tests/format/compat/ was written once from a frozen sample set and is committed; this test
 * reads it with today's reader and compares every field.
 *
 *   test_compat                 check tests/format/compat/v*.stk (run from the repo root)
 *   test_compat --write FILE    write the 1.0 sample capture (done once, when 1.0 was released)
 * v1.1.stk, v2.0.stk, v2.1.stk, v2.2.stk, v3.0.stk, v4.0.stk, v4.1.stk and v4.2.stk were written
 * once by tests/tools/mkcompat from samples_v1_1.h, samples_v2_0.h, samples_v2_1.h,
 * samples_v2_2.h, samples_v3_0.h, samples_v4_0.h, samples_v4_1.h and samples_v4_2.h.
 */
#include "helpers.h"
#include "samples.h"
#include "samples_v1_1.h"
#include "samples_v2_0.h"
#include "samples_v2_1.h"
#include "samples_v2_2.h"
#include "samples_v3_0.h"
#include "samples_v4_0.h"
#include "samples_v4_1.h"
#include "samples_v4_2.h"

#define V1_0_PATH "tests/format/compat/v1.0.stk"
#define V1_1_PATH "tests/format/compat/v1.1.stk"
#define V2_0_PATH "tests/format/compat/v2.0.stk"
#define V2_1_PATH "tests/format/compat/v2.1.stk"
#define V2_2_PATH "tests/format/compat/v2.2.stk"
#define V3_0_PATH "tests/format/compat/v3.0.stk"
#define V4_0_PATH "tests/format/compat/v4.0.stk"
#define V4_1_PATH "tests/format/compat/v4.1.stk"
#define V4_2_PATH "tests/format/compat/v4.2.stk"

static int write_sample(const char *path)
{
	struct cap_record recs[SAMPLE_NRECORDS];
	struct cap_writer *w = cap_writer__open(path);
	int i, err = 0;

	if (!w) {
		fprintf(stderr, "test_compat: %s: %s\n", path, strerror(errno));
		return 1;
	}
	sample_records(recs);
	for (i = 0; i < SAMPLE_NRECORDS && !err; i++)
		err = cap_writer__put(w, &recs[i]);
	/* One optional chunk of a type 1.0 does not know: later readers must skip it too. */
	if (!err)
		err = cap_writer__put_raw(w, 1000, 0, "reserved", 8);
	if (!err)
		err = cap_writer__finish(w);
	cap_writer__close(w);
	if (err)
		fprintf(stderr, "test_compat: %s: %s\n", path, strerror(-err));
	return !!err;
}

/* Open a committed capture and check its version; NULL (a failed check) when it does not open. */
static struct cap_reader *open_compat(const char *path, const char *label, uint16_t want_major,
				      uint16_t want_minor)
{
	struct cap_reader *r = cap_reader__open(path);
	uint16_t major, minor;
	char name[64];

	snprintf(name, sizeof(name), "%s opens", label);
	if (!T_CHECK(name, r, "%s: %s", path, strerror(errno)))
		return NULL;
	cap_reader__version(r, &major, &minor);
	snprintf(name, sizeof(name), "%s version", label);
	T_CHECK(name, major == want_major && minor == want_minor, "%u.%u", major, minor);
	return r;
}

/*
 * Read n records and check each against recs[i] ("LABEL record I"); the decoded ones land in
 * got[] (NULL where one failed). Returns the flags of the chunks of type flags_of, or'ed.
 */
static uint16_t read_compare(struct cap_reader *r, const char *label,
			     const struct cap_record *recs, struct cap_record **got, int n,
			     uint32_t flags_of)
{
	struct cap_chunk ch;
	uint16_t flags = 0;
	char name[64], why[128];
	int i, ret;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s record %d", label, i);
		ret = cap_reader__next(r, &ch);
		if (ret != 1) {
			T_FAIL(name, "next returned %d", ret);
			break;
		}
		if (ch.type == flags_of)
			flags |= ch.flags;
		ret = cap_record__decode(&ch, &got[i]);
		if (ret) {
			T_FAIL(name, "decode: %s", strerror(-ret));
			continue;
		}
		T_CHECK(name, ch.index == (uint32_t)i &&
			record_eq(&recs[i], got[i], why, sizeof(why)),
			"chunk %u: %s", ch.index, why);
	}
	return flags;
}

/* The file ends after its records, the unknown optional chunk skipped ("LABEL clean end"). */
static void check_clean_end(struct cap_reader *r, const char *label)
{
	struct cap_chunk ch;
	char name[96];

	snprintf(name, sizeof(name), "%s clean end (unknown optional chunk skipped)", label);
	T_EQ_INT(name, 0, cap_reader__next(r, &ch));
}

/* Free the n records read_compare() decoded into got[], and close r. */
static void release(struct cap_reader *r, struct cap_record **got, int n)
{
	for (int i = 0; i < n; i++)
		cap_record__free(got[i]);
	cap_reader__close(r);
}

/*
 * format 1.1: every record against samples_v1_1.h, then the values written out as literals, so
 * an edit of the frozen samples would not go unnoticed.
 */
static void check_v1_1(void)
{
	struct cap_record recs[SAMPLE11_NRECORDS], *got[SAMPLE11_NRECORDS] = { 0 };
	struct cap_reader *r;
	uint16_t events_flags;

	sample11_records(recs);
	r = open_compat(V1_1_PATH, "compat 1.1", 1, 1);
	if (!r)
		return;
	events_flags = read_compare(r, "compat 1.1", recs, got, SAMPLE11_NRECORDS,
				    CAP_CHUNK_EVENTS);
	check_clean_end(r, "compat 1.1");
	T_EQ_INT("compat 1.1 EVENTS chunk is mandatory", CAP_CHUNK_F_MANDATORY, events_flags);
	if (got[6] && got[7] && got[3] && got[4] && got[8]) {
		const struct cap_row *row = &got[6]->interval.rows[2];
		const struct cap_losses *l = &got[7]->losses;
		const struct cap_object *o = &got[3]->objects.objs[1];

		T_CHECK("compat 1.1 literal: events row 2",
			got[6]->type == CAP_CHUNK_EVENTS && row->ts_ns == 6000000002ull &&
			row->cpu == 4095 && row->ustack == 2 && row->count == 1, "ts %" PRIu64
			" cpu %u", row->ts_ns, row->cpu);
		T_CHECK("compat 1.1 literal: per-cpu drops",
			l->ncpus == 4 && l->cpu_dropped[0] == 5 && l->cpu_dropped[1] == 0 &&
			l->cpu_dropped[2] == 1000000 && l->cpu_dropped[3] == 7 &&
			l->counts[CAP_LOSS_EVENTS_DROPPED] == 1000012, "ncpus %u", l->ncpus);
		T_CHECK("compat 1.1 literal: whole object",
			o->flags == (CAP_OBJ_F_DYNSYM | CAP_OBJ_F_WHOLE | CAP_OBJ_F_PSEUDO_ID) &&
			o->data_len == 64 && o->data[0] == 0x7f && o->data[26] == 0xfd &&
			o->data[63] == 11 && o->build_id_len == 16 && o->build_id[15] == 0x10 &&
			!strcmp(o->path, "/usr/lib/libnoid.so"), "flags %#x len %" PRIu64,
			o->flags, o->data_len);
		T_CHECK("compat 1.1 literal: symtab object",
			got[3]->objects.objs[0].nsyms == 4 &&
			!strcmp(got[3]->objects.objs[0].syms[1].name, "_ZN3app5serveEv") &&
			got[3]->objects.objs[0].segs[1].memsz == 0x4000 &&
			!strcmp(got[3]->objects.objs[0].debuglink, "server.debug") &&
			!got[3]->objects.objs[0].data, "values differ");
		T_CHECK("compat 1.1 literal: perfmap in file order",
			got[4]->perfmap.count == 3 && got[4]->perfmap.pid == 3100 &&
			!strcmp(got[4]->perfmap.syms[0].name, "jit_old") &&
			!strcmp(got[4]->perfmap.syms[2].name, "jit_new") &&
			got[4]->perfmap.syms[1].addr == 0x7f1000000000ull, "values differ");
		T_CHECK("compat 1.1 literal: second ksyms", got[8]->ksyms.count == 3 &&
			!strcmp(got[8]->ksyms.syms[2].module, "nf_tables"), "values differ");
	}
	T_EQ_STR("compat 1.1 literal: meta mode", "snoop", cap_meta_get(&recs[0].meta, "mode"));
	release(r, got, SAMPLE11_NRECORDS);
}

/*
 * format 2.0: every record against samples_v2_0.h, the chunk flags of KSYMS_ADD, then values
 * written out as literals.
 */
static void check_v2_0(void)
{
	struct cap_record recs[SAMPLE20_NRECORDS], *got[SAMPLE20_NRECORDS] = { 0 };
	struct cap_reader *r;
	uint16_t add_flags;

	sample20_records(recs);
	r = open_compat(V2_0_PATH, "compat 2.0", 2, 0);
	if (!r)
		return;
	add_flags = read_compare(r, "compat 2.0", recs, got, SAMPLE20_NRECORDS,
				 CAP_CHUNK_KSYMS_ADD);
	check_clean_end(r, "compat 2.0");
	T_EQ_INT("compat 2.0 KSYMS_ADD chunks are mandatory", CAP_CHUNK_F_MANDATORY, add_flags);
	if (got[1] && got[5] && got[8]) {
		const struct cap_ksym *a = got[1]->ksyms.syms, *b = got[5]->ksyms.syms;

		T_CHECK("compat 2.0 literal: first KSYMS_ADD",
			got[1]->type == CAP_CHUNK_KSYMS_ADD && got[1]->ksyms.count == 4 &&
			a[1].addr == 0xffffffff81000180ull && a[1].size == 1 && !a[1].module &&
			a[3].size == 0x3ff00000ull && !strcmp(a[3].module, "nf_tables"),
			"count %u", got[1]->ksyms.count);
		T_CHECK("compat 2.0 literal: the replacing KSYMS_ADD", got[5]->ksyms.count == 2 &&
			b[0].addr == 0xffffffffc0100000ull && b[0].size == 0x2000 &&
			!strcmp(b[1].name, "bpf_prog_6deef7357e7b4530_on_sample") &&
			!strcmp(b[1].module, "bpf"), "values differ");
		T_CHECK("compat 2.0 literal: hidden KSYMS_ADD",
			got[8]->ksyms.flags == CAP_KSYMS_F_HIDDEN && got[8]->ksyms.count == 0,
			"flags %#x count %u", got[8]->ksyms.flags, got[8]->ksyms.count);
	}
	T_EQ_STR("compat 2.0 literal: meta kallsyms", "hits",
		 cap_meta_get(&recs[0].meta, "kallsyms"));
	release(r, got, SAMPLE20_NRECORDS);
}

/*
 * format 2.1: every record against samples_v2_1.h, then the objects' values written out as
 * literals: the DEBUGFILE flag and the symbols as stored (a name keeps its version on disk).
 */
static void check_v2_1(void)
{
	struct cap_record recs[SAMPLE21_NRECORDS], *got[SAMPLE21_NRECORDS] = { 0 };
	struct cap_reader *r;

	sample21_records(recs);
	r = open_compat(V2_1_PATH, "compat 2.1", 2, 1);
	if (!r)
		return;
	read_compare(r, "compat 2.1", recs, got, SAMPLE21_NRECORDS, 0);
	check_clean_end(r, "compat 2.1");
	if (got[3]) {
		const struct cap_object *lib = &got[3]->objects.objs[0];
		const struct cap_object *exe = &got[3]->objects.objs[1];

		T_CHECK("compat 2.1 literal: union of .dynsym and the debug file's .symtab",
			got[3]->type == CAP_CHUNK_OBJECTS && got[3]->objects.count == 2 &&
			lib->flags == 0x23 && lib->nsyms == 5 &&
			!strcmp(lib->syms[2].name, "start_thread") &&
			!strcmp(lib->syms[3].name, "clock_nanosleep@GLIBC_2.2.5") &&
			lib->syms[3].addr == 0xcf4e0 && lib->syms[3].size == 0x86,
			"flags %#x nsyms %u", lib->flags, lib->nsyms);
		T_CHECK("compat 2.1 literal: whole object with its debug file's symbols",
			exe->flags == 0x2b && exe->data_len == 32 && exe->data[24] == 0x21 &&
			exe->nsyms == 2 && !strcmp(exe->syms[1].name, "nap") &&
			!strcmp(exe->debuglink, "sleeper.debug"), "flags %#x len %" PRIu64,
			exe->flags, exe->data_len);
	}
	T_EQ_STR("compat 2.1 literal: meta objects", "symtabs",
		 cap_meta_get(&recs[0].meta, "objects"));
	release(r, got, SAMPLE21_NRECORDS);
}

/*
 * format 2.2: every record against samples_v2_2.h (test_v2_2 checks the split interval's
 * fields one by one), then the parts of the split interval written out as literals.
 */
static void check_v2_2(void)
{
	struct cap_record recs[SAMPLE22_NRECORDS], *got[SAMPLE22_NRECORDS] = { 0 };
	struct cap_reader *r;

	sample22_records(recs);
	r = open_compat(V2_2_PATH, "compat 2.2", 2, 2);
	if (!r)
		return;
	read_compare(r, "compat 2.2", recs, got, SAMPLE22_NRECORDS, 0);
	check_clean_end(r, "compat 2.2");
	if (got[3] && got[5])
		T_CHECK("compat 2.2 literal: two parts of interval 0",
			got[3]->interval.seq == 0 && got[5]->interval.seq == 0 &&
			got[3]->interval.end_ns == 23000000000ull &&
			got[5]->interval.end_ns == 23000000000ull &&
			!strcmp(got[3]->interval.rows[0].comm, "launcher") &&
			!strcmp(got[5]->interval.rows[0].comm, "worker"), "values differ");
	release(r, got, SAMPLE22_NRECORDS);
}

/*
 * format 3.0: every record against samples_v3_0.h, then the symbols whose varints take the
 * most bytes written out as literals: the 133-byte name, the gap of 2^40, the top address.
 */
static void check_v3_0(void)
{
	struct cap_record recs[SAMPLE30_NRECORDS], *got[SAMPLE30_NRECORDS] = { 0 };
	struct cap_reader *r;

	sample30_records(recs);
	r = open_compat(V3_0_PATH, "compat 3.0", 3, 0);
	if (!r)
		return;
	read_compare(r, "compat 3.0", recs, got, SAMPLE30_NRECORDS, 0);
	check_clean_end(r, "compat 3.0");
	if (got[3]) {
		const struct cap_object *exe = &got[3]->objects.objs[0];
		const struct cap_object *agent = &got[3]->objects.objs[1];

		T_CHECK("compat 3.0 literal: packed symbols of the executable",
			got[3]->objects.count == 3 && exe->nsyms == 5 &&
			exe->syms[3].addr == 0x401100 && !strcmp(exe->syms[3].name, "handle_alias") &&
			exe->syms[1].size == 0 && exe->syms[4].size == 0x200000 &&
			got[3]->objects.objs[2].nsyms == 0, "nsyms %u", exe->nsyms);
		T_CHECK("compat 3.0 literal: packed symbols of the agent",
			agent->nsyms == 4 && strlen(agent->syms[1].name) == 133 &&
			agent->syms[2].addr == 0x10000027c10ull &&
			agent->syms[3].addr == 0xfffffffffffffff0ull &&
			!strcmp(agent->syms[3].name, "top"), "nsyms %u", agent->nsyms);
	}
	release(r, got, SAMPLE30_NRECORDS);
}

/*
 * format 4.0: every record against samples_v4_0.h, intervals through the file's stacks (each row's
 * stacks by content, struct cap_stacks), then what each INTERVAL chunk holds written out: only
 * the stacks new to the file, and rows that refer to the file's.
 */
static void check_v4_0(void)
{
	struct cap_record recs[SAMPLE40_NRECORDS], *got[SAMPLE40_NRECORDS] = { 0 };
	struct cap_stacks stacks;
	struct cap_reader *r;
	struct cap_chunk ch;
	char name[64], why[128];
	int i, k = 0;

	sample40_records(recs);
	r = open_compat(V4_0_PATH, "compat 4.0", 4, 0);
	if (!r)
		return;
	cap_stacks__init(&stacks, 4, NULL);
	for (i = 0; i < SAMPLE40_NRECORDS; i++) {
		const char *d;

		snprintf(name, sizeof(name), "compat 4.0 record %d", i);
		if (cap_reader__next(r, &ch) != 1 || cap_record__decode(&ch, &got[i])) {
			T_FAIL(name, "not read");
			break;
		}
		if (got[i]->type != CAP_CHUNK_INTERVAL) {
			T_CHECK(name, record_eq(&recs[i], got[i], why, sizeof(why)), "%s", why);
			continue;
		}
		d = cap_stacks__add(&stacks, &got[i]->interval) ? "refers past the file's stacks" :
			interval_file_diff(&recs[i].interval, &stacks, &got[i]->interval);
		T_CHECK(name, !d, "%s", d);
		snprintf(name, sizeof(name), "compat 4.0 interval chunk %d: new stacks only", i);
		T_CHECK(name, got[i]->interval.nkstacks == sample40_new_k[k] &&
			got[i]->interval.nustacks == sample40_new_u[k], "%u kernel, %u user",
			got[i]->interval.nkstacks, got[i]->interval.nustacks);
		k++;
	}
	check_clean_end(r, "compat 4.0");
	T_CHECK("compat 4.0 literal: the file's stacks", stacks.n[0] == 2 && stacks.n[1] == 5 &&
		stacks.v[1][3].flags == CAP_STACK_F_TRUNCATED && stacks.v[1][3].nips == 2 &&
		stacks.v[1][4].ips[0] == 0x5555deadb340ull, "%u kernel, %u user", stacks.n[0],
		stacks.n[1]);
	if (got[5] && got[10])
		T_CHECK("compat 4.0 literal: rows refer to the file's stacks",
			got[5]->interval.rows[0].kstack == 2 && got[5]->interval.rows[0].ustack == 1 &&
			got[5]->interval.rows[2].ustack == 4 &&
			got[10]->interval.rows[0].ustack == 5 &&
			got[10]->interval.rows[1].ustack == 2, "values differ");
	cap_stacks__release(&stacks);
	release(r, got, SAMPLE40_NRECORDS);
}

/*
 * format 4.1: every record against samples_v4_1.h, the intervals through the file's stacks
 * (interval 1 uses a stack with Python frames interval 0 brought), the CODES chunks' flags,
 * then the code entries and frame words written out as literals: the runs going back, the
 * five-byte id, the offsets of none and of 24 bits, the Python loss kinds.
 */
static void check_v4_1(void)
{
	struct cap_record recs[SAMPLE41_NRECORDS], *got[SAMPLE41_NRECORDS] = { 0 };
	struct cap_stacks stacks;
	struct cap_reader *r;
	struct cap_chunk ch;
	uint16_t codes_flags = CAP_CHUNK_F_MANDATORY;
	char name[64], why[128];
	int i, k = 0;

	sample41_records(recs);
	r = open_compat(V4_1_PATH, "compat 4.1", 4, 1);
	if (!r)
		return;
	cap_stacks__init(&stacks, 4, NULL);
	for (i = 0; i < SAMPLE41_NRECORDS; i++) {
		const char *d;

		snprintf(name, sizeof(name), "compat 4.1 record %d", i);
		if (cap_reader__next(r, &ch) != 1 || cap_record__decode(&ch, &got[i])) {
			T_FAIL(name, "not read");
			break;
		}
		if (ch.type == CAP_CHUNK_CODES)
			codes_flags &= ch.flags;
		if (got[i]->type != CAP_CHUNK_INTERVAL) {
			T_CHECK(name, record_eq(&recs[i], got[i], why, sizeof(why)), "%s", why);
			continue;
		}
		d = cap_stacks__add(&stacks, &got[i]->interval) ? "refers past the file's stacks" :
			interval_file_diff(&recs[i].interval, &stacks, &got[i]->interval);
		T_CHECK(name, !d, "%s", d);
		snprintf(name, sizeof(name), "compat 4.1 interval chunk %d: new stacks only", i);
		T_CHECK(name, got[i]->interval.nkstacks == sample41_new_k[k] &&
			got[i]->interval.nustacks == sample41_new_u[k], "%u kernel, %u user",
			got[i]->interval.nkstacks, got[i]->interval.nustacks);
		k++;
	}
	check_clean_end(r, "compat 4.1");
	T_EQ_INT("compat 4.1 CODES chunks are mandatory", CAP_CHUNK_F_MANDATORY, codes_flags);
	if (got[4] && got[7] && stacks.n[1] == 3) {
		const struct cap_code *c = got[4]->codes.codes;
		const uint64_t *u1 = stacks.v[1][1].ips, *u2 = stacks.v[1][2].ips;

		T_CHECK("compat 4.1 literal: <module>'s runs", got[4]->codes.count == 7 &&
			c[0].nlines == 5 && c[0].lines[2].start == 9 && c[0].lines[2].line == 12 &&
			c[0].lines[3].line == 0 && c[0].lines[4].start == 300 &&
			c[0].lines[4].line == 40 && !strcmp(c[0].file, "/srv/app/main.py"),
			"count %u", got[4]->codes.count);
		T_CHECK("compat 4.1 literal: names and reasons",
			c[1].lines[1].line == 70062 &&
			!strcmp(c[2].name, "Gr\xc3\xbc\xc3\x9f" "e.gr\xc3\xbc\xc3\x9f") &&
			c[2].firstline == 1178 && c[4].reason == CAP_CODE_CHANGED &&
			!strcmp(c[4].name, "") && c[6].id == 0x80000001u &&
			c[6].reason == CAP_CODE_FULL && c[6].addr == 0 &&
			got[7]->codes.count == 1 && got[7]->codes.codes[0].id == 8, "values differ");
		T_CHECK("compat 4.1 literal: interpreter frames",
			CAP_CODE_FRAME_IS(u1[1]) && CAP_CODE_FRAME_ID(u1[1]) == 3 &&
			CAP_CODE_FRAME_OFF(u1[1]) == CAP_CODE_OFF_NONE &&
			CAP_CODE_FRAME_OFF(u1[2]) == 0xfffffe &&
			CAP_CODE_FRAME_ID(u1[3]) == 0x80000001u && !CAP_CODE_FRAME_IS(u1[4]) &&
			CAP_CODE_FRAME_ID(u2[1]) == 8 && CAP_CODE_FRAME_OFF(u2[1]) == 6,
			"words differ");
	} else {
		T_FAIL("compat 4.1 literal", "records or the file's 3 user stacks missing");
	}
	if (got[6] && got[9])
		T_CHECK("compat 4.1 literal: Python losses",
			got[6]->losses.counts[CAP_LOSS_PY_VERSION] == 122 &&
			got[6]->losses.counts[CAP_LOSS_PY_NAMES_FULL] == 129 &&
			got[9]->losses.counts[CAP_LOSS_PY_TRUNCATED] == 2, "counts differ");
	T_EQ_STR("compat 4.1 literal: meta python_frames", "python",
		 cap_meta_get(&recs[0].meta, "python_frames"));
	cap_stacks__release(&stacks);
	release(r, got, SAMPLE41_NRECORDS);
}

/*
 * format 4.2: every record against samples_v4_2.h (one interval: its stacks are the file's),
 * then what 4.2 added written out as literals: the PLT stubs' names kept whole (no symbol
 * version), _init's size.
 */
static void check_v4_2(void)
{
	struct cap_record recs[SAMPLE42_NRECORDS], *got[SAMPLE42_NRECORDS] = { 0 };
	struct cap_reader *r;

	sample42_records(recs);
	r = open_compat(V4_2_PATH, "compat 4.2", 4, 2);
	if (!r)
		return;
	read_compare(r, "compat 4.2", recs, got, SAMPLE42_NRECORDS, 0);
	check_clean_end(r, "compat 4.2");
	if (got[2]) {
		const struct cap_object *o = &got[2]->objects.objs[0];

		T_CHECK("compat 4.2 literal: PLT stubs and a sized _init",
			o->nsyms == 7 && !strcmp(o->syms[2].name, "memcmp@plt") &&
			cap_symbol_base_len(o->syms[2].name) == strlen("memcmp@plt") &&
			cap_symbol_is_plt(o->syms[3].name) && o->syms[0].size == 0x17,
			"nsyms %u", o->nsyms);
	}
	release(r, got, SAMPLE42_NRECORDS);
}

int main(int argc, char **argv)
{
	struct cap_record recs[SAMPLE_NRECORDS], *got[SAMPLE_NRECORDS] = { 0 };
	struct cap_reader *r;
	struct cap_chunk ch;
	int i;

	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_sample(argv[2]);
	sample_records(recs);
	r = open_compat(V1_0_PATH, "compat 1.0", 1, 0);
	if (!r)
		T_EXIT();
	read_compare(r, "compat 1.0", recs, got, SAMPLE_NRECORDS, 0);
	for (i = 0; i < SAMPLE_NRECORDS; i++)
		cap_record__free(got[i]);
	/* Spot checks written out, in case the sample set were ever edited by mistake. */
	T_EQ_STR("compat 1.0 literal: meta kernel", "6.1.0-18-amd64",
		 cap_meta_get(&recs[0].meta, "kernel"));
	T_EQ_U64("compat 1.0 literal: end events", 0x100000003e8ull, recs[5].end.events);
	T_EQ_U64("compat 1.0 literal: row 1 count", 0xffffffffffull,
		 recs[3].interval.rows[1].count);
	T_EQ_INT("compat 1.0 clean end (unknown optional chunk skipped)", 0,
		 cap_reader__next(r, &ch));
	T_EQ_INT("compat 1.0 last chunk returned is 5", 5, cap_reader__chunk_index(r));
	cap_reader__close(r);
	check_v1_1();
	check_v2_0();
	check_v2_1();
	check_v2_2();
	check_v3_0();
	check_v4_0();
	check_v4_1();
	check_v4_2();
	T_EXIT();
}
