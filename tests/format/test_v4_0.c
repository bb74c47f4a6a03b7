/* SPDX-License-Identifier: MIT */
/*
 * test_v4_0: what format 4.0 changed (docs/format.md 4.4 and 5): a stack is written once per
 * file. The writer takes self-contained intervals and writes, in each INTERVAL or EVENTS chunk,
 * only the stacks its rows use that the file does not hold yet; rows refer to the file's stacks,
 * which a reader keeps in a struct cap_stacks. Checked: the sample set of 4.0 written now (new
 * stacks only, every row's stacks by content), a file of many intervals of the same stacks
 * (its size grows with rows, not with stacks), a chunk that failed to be written (its stacks are
 * written by the next chunk), EVENTS, rows referring past the file's stacks (EBADMSG, the table
 * unchanged), the memory budget, 3.x intervals (their own tables), a file cut at every byte
 * (what was read before resolves), and the header says 4.0.
 */
#include <signal.h>
#include <sys/resource.h>

#include "helpers.h"
#include "samples_v4_0.h"

static char *dir;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/*
 * Read buf (a capture of the 4.0 samples, possibly cut) through a struct cap_stacks, checking
 * each record against the samples; returns how many records were read, *end the reader's last
 * return (0 clean end, or the error).
 */
static int read_samples(const uint8_t *buf, size_t len, const char *label, bool report,
			int *end)
{
	struct cap_record recs[SAMPLE40_NRECORDS], *got[SAMPLE40_NRECORDS] = { 0 };
	struct cap_reader *r = cap_reader__open_mem(buf, len);
	struct cap_stacks stacks;
	struct cap_chunk ch;
	char name[96], why[128];
	int i = 0, k = 0, bad = 0;

	*end = -EINVAL;
	if (!r)
		return -1;
	sample40_records(recs);
	cap_stacks__init(&stacks, 4, NULL);
	while (i < SAMPLE40_NRECORDS && (*end = cap_reader__next(r, &ch)) == 1) {
		const char *d = NULL;

		if (cap_record__decode(&ch, &got[i])) {
			d = "not decoded";
		} else if (got[i]->type == CAP_CHUNK_INTERVAL) {
			if (cap_stacks__add(&stacks, &got[i]->interval))
				d = "refers past the file's stacks";
			else
				d = interval_file_diff(&recs[i].interval, &stacks, &got[i]->interval);
			if (!d && (got[i]->interval.nkstacks != sample40_new_k[k] ||
				   got[i]->interval.nustacks != sample40_new_u[k]))
				d = "holds stacks the file held already";
			k++;
		} else if (!record_eq(&recs[i], got[i], why, sizeof(why))) {
			d = why;
		}
		if (report) {
			snprintf(name, sizeof(name), "%s record %d", label, i);
			T_CHECK(name, !d, "%s", d);
		}
		bad += !!d;
		i++;
	}
	if (i == SAMPLE40_NRECORDS)
		*end = cap_reader__next(r, &ch);
	for (int j = 0; j < i; j++)
		cap_record__free(got[j]);
	cap_stacks__release(&stacks);
	cap_reader__close(r);
	return bad ? -1 : i;
}

/* The samples written now: the header says 4.0; each stack once, rows resolved to them. */
static void test_samples(void)
{
	struct cap_record recs[SAMPLE40_NRECORDS];
	struct capture_image img;
	int n, end;

	sample40_records(recs);
	if (!T_CHECK("samples written", !capture_image__make(&img, path_in("s.stk"), recs,
							       SAMPLE40_NRECORDS, 1),
		     "could not write or read back"))
		return;
	T_CHECK("header: file says 4.0", img.buf[8] == 4 && img.buf[9] == 0 &&
		img.buf[10] == CAP_MINOR && img.buf[11] == 0, "%u %u %u %u", img.buf[8],
		img.buf[9], img.buf[10], img.buf[11]);
	n = read_samples(img.buf, img.len, "samples", true, &end);
	T_EQ_INT("samples read back whole", SAMPLE40_NRECORDS, n);
	T_EQ_INT("samples clean end", 0, end);
	capture_image__free(&img);
}

/* format.md 4.4: a row's bytes in an INTERVAL payload (comm of n bytes). */
#define ROW_BYTES(n) (36u + (n))
#define NSTACKS 50u
#define DEPTH 20u
#define NINTERVALS 1000u

/*
 * An exec storm's shape: many intervals (or interval parts) over the same stacks. 3.x repeated
 * the tables in every chunk; now the first chunk holds them and each later one its rows only.
 */
static void test_many_intervals(void)
{
	static uint64_t ips[2 * NSTACKS][DEPTH];
	struct cap_stack ks[NSTACKS], us[NSTACKS];
	struct cap_row rows[NSTACKS];
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };
	struct cap_writer *w = cap_writer__open(path_in("many.stk"));
	uint64_t first = 0, size;
	uint32_t i, bad = 0;
	int err = 0;

	if (!T_CHECK("many: writer", w, "%s", strerror(errno)))
		return;
	for (i = 0; i < NSTACKS; i++) {
		for (uint32_t j = 0; j < DEPTH; j++) {
			ips[i][j] = 0xffffffff81000000ull + i * 0x100 + j;
			ips[NSTACKS + i][j] = 0x400000 + i * 0x100 + j;
		}
		ks[i] = (struct cap_stack){ 0, DEPTH, ips[i] };
		us[i] = (struct cap_stack){ 0, DEPTH, ips[NSTACKS + i] };
		/* rows use the stacks in another order than the tables hold them */
		rows[i] = (struct cap_row){ .pid = 7, .tid = 7 + i, .comm = "storm",
					    .kstack = NSTACKS - i, .ustack = i + 1, .count = 1 };
	}
	rec.interval = (struct cap_interval){ .nkstacks = NSTACKS, .kstacks = ks,
					      .nustacks = NSTACKS, .ustacks = us,
					      .nrows = NSTACKS, .rows = rows };
	for (i = 0; i < NINTERVALS && !err; i++) {
		rec.interval.seq = i;
		err = cap_writer__put(w, &rec);
		if (!i)
			first = cap_writer__size(w);
	}
	size = cap_writer__size(w);
	cap_writer__close(w);
	if (!T_CHECK("many: written", !err, "%s", strerror(-err)))
		return;
	{
		struct cap_reader *r = cap_reader__open(path_in("many.stk"));
		struct cap_record *got, *first_rec = NULL;
		struct cap_stacks stacks;
		struct cap_chunk ch;

		cap_stacks__init(&stacks, 4, NULL);
		for (i = 0; r && cap_reader__next(r, &ch) == 1; i++) {
			const char *d = NULL;

			if (cap_record__decode(&ch, &got)) {
				bad++;
				continue;
			}
			rec.interval.seq = i;
			if (cap_stacks__add(&stacks, &got->interval) ||
			    (i && ch.len != 32 + NSTACKS * ROW_BYTES(5)) ||
			    (d = interval_file_diff(&rec.interval, &stacks, &got->interval)))
				bad++;
			/* the rows' stacks live in the first record, kept by the table: keep it */
			if (i)
				cap_record__free(got);
			else
				first_rec = got;
		}
		T_EQ_INT("many: every interval read", NINTERVALS, i);
		T_EQ_INT("many: later chunks hold their rows only, every row resolves", 0, bad);
		T_CHECK("many: the file holds each stack once", stacks.n[0] == NSTACKS &&
			stacks.n[1] == NSTACKS, "%u, %u", stacks.n[0], stacks.n[1]);
		cap_stacks__release(&stacks);
		cap_record__free(first_rec);
		cap_reader__close(r);
	}
	/* each later chunk is its rows compressed: well under a tenth of the first's stacks */
	T_CHECK("many: size grows with rows, not stacks", size - first < (NINTERVALS - 1) *
		(first / 10), "first %" PRIu64 ", total %" PRIu64, first, size);
}

/*
 * format.md 6: a chunk the writer could not write is not in the file; the stacks it would have
 * brought are written by the next chunk that uses them. RLIMIT_FSIZE makes the write fail
 * (EFBIG) without root.
 */
static void test_failed_write(void)
{
	struct cap_record recs[SAMPLE40_NRECORDS];
	struct cap_writer *w = cap_writer__open(path_in("fail.stk"));
	struct rlimit old, small;
	struct capture_image img = { 0 };
	int err, end;

	if (!T_CHECK("failed write: writer", w, "%s", strerror(errno)))
		return;
	sample40_records(recs);
	for (int i = 0; i < 3; i++)
		cap_writer__put(w, &recs[i]);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = cap_writer__size(w) + 40;	/* less than interval 0's chunk */
	setrlimit(RLIMIT_FSIZE, &small);
	err = cap_writer__put(w, &recs[3]);
	setrlimit(RLIMIT_FSIZE, &old);
	T_EQ_INT("failed write: EFBIG", -EFBIG, err);
	err = 0;
	for (int i = 3; i < SAMPLE40_NRECORDS && !err; i++)
		err = cap_writer__put(w, &recs[i]);
	cap_writer__close(w);
	T_EQ_INT("failed write: the next chunks are written", 0, err);
	img.buf = slurp(path_in("fail.stk"), &img.len);
	T_EQ_INT("failed write: the file reads as if it had not happened", SAMPLE40_NRECORDS,
		 read_samples(img.buf, img.len, "failed write", false, &end));
	free(img.buf);
}

/* EVENTS chunks (format.md 4.7) share the file's stacks the same way. */
static void test_events(void)
{
	uint64_t u[] = { 0x401000, 0x401100 }, k[] = { 0xffffffff81000010ull };
	struct cap_stack us[] = { { 0, 2, u } }, ks[] = { { 0, 1, k } };
	struct cap_row rows[] = {
		{ .pid = 9, .tid = 9, .comm = "ev", .kstack = 1, .ustack = 1, .count = 1, .ts_ns = 5,
		  .cpu = 1 },
		{ .pid = 9, .tid = 9, .comm = "ev", .kstack = 0, .ustack = 1, .count = 1, .ts_ns = 6,
		  .cpu = 0 },
	};
	struct cap_record rec = { .type = CAP_CHUNK_EVENTS };
	struct cap_record *got[2] = { 0 };
	struct cap_writer *w = cap_writer__open(path_in("ev.stk"));
	struct cap_reader *r;
	struct cap_stacks stacks;
	struct cap_chunk ch;
	const char *d = "not read";

	rec.interval = (struct cap_interval){ .seq = 0, .nkstacks = 1, .kstacks = ks,
					      .nustacks = 1, .ustacks = us, .nrows = 2,
					      .rows = rows };
	if (!w || cap_writer__put(w, &rec) || cap_writer__put(w, &rec)) {
		T_FAIL("events: written", "%s", strerror(errno));
		cap_writer__close(w);
		return;
	}
	cap_writer__close(w);
	r = cap_reader__open(path_in("ev.stk"));
	cap_stacks__init(&stacks, 4, NULL);
	for (int i = 0; i < 2 && r && cap_reader__next(r, &ch) == 1; i++) {
		if (cap_record__decode(&ch, &got[i]) || cap_stacks__add(&stacks, &got[i]->interval))
			break;
		d = interval_file_diff(&rec.interval, &stacks, &got[i]->interval);
		if (d)
			break;
	}
	T_CHECK("events: both batches resolve, the second holds no stack",
		!d && got[1] && !got[1]->interval.nkstacks && !got[1]->interval.nustacks &&
		got[1]->interval.rows[0].ts_ns == 5, "%s", d ? d : "the second holds stacks");
	cap_stacks__release(&stacks);
	cap_record__free(got[0]);
	cap_record__free(got[1]);
	cap_reader__close(r);
}

static void test_refs_checked(void)
{
	uint64_t k0[] = { 0xffffffff81000010ull }, k1[] = { 0xffffffff81000020ull };
	struct cap_stack ks[] = { { 0, 1, k0 }, { 0, 1, k1 } };
	struct cap_row row = { .pid = 1, .tid = 1, .comm = "x", .kstack = 2, .count = 1 };
	struct cap_interval a = { .nkstacks = 2, .kstacks = ks, .nrows = 1, .rows = &row };
	struct cap_interval none = { .nrows = 1, .rows = &row };
	struct cap_budget small = { .limit = 64 };
	struct cap_stacks stacks;

	cap_stacks__init(&stacks, 4, NULL);
	row.kstack = 3;
	T_EQ_INT("refs: a row past the file's stacks: EBADMSG", -EBADMSG,
		 cap_stacks__add(&stacks, &a));
	T_EQ_INT("refs: the table is unchanged", 0, stacks.n[0]);
	row.kstack = 2;
	T_EQ_INT("refs: within them: added", 0, cap_stacks__add(&stacks, &a));
	T_EQ_INT("refs: a record without stacks refers to earlier ones", 0,
		 cap_stacks__add(&stacks, &none));
	T_CHECK("refs: resolved to the earlier record's stack",
		cap_stacks__get(&stacks, &none, false, 2) == &stacks.v[0][1] &&
		stacks.v[0][1].ips == k1 && !cap_stacks__get(&stacks, &none, false, 3) &&
		!cap_stacks__get(&stacks, &none, true, 1), "wrong stack");
	cap_stacks__release(&stacks);

	/* 3.x: each record resolves its own rows, nothing is kept */
	cap_stacks__init(&stacks, 3, NULL);
	T_CHECK("refs: 3.x records keep their own tables", !cap_stacks__add(&stacks, &a) &&
		!stacks.n[0] && cap_stacks__get(&stacks, &a, false, 2) == &ks[1] &&
		!cap_stacks__get(&stacks, &none, false, 2), "wrong stack");
	cap_stacks__release(&stacks);

	/* format.md 2: the table's bytes come from the reader's budget */
	cap_stacks__init(&stacks, 4, &small);
	T_EQ_INT("refs: over the budget: EFBIG", -EFBIG, cap_stacks__add(&stacks, &a));
	T_CHECK("refs: nothing taken", !stacks.n[0] && !small.used, "n %u, used %" PRIu64,
		stacks.n[0], small.used);
	small.limit = 0;
	cap_stacks__add(&stacks, &a);
	cap_stacks__release(&stacks);
	T_EQ_U64("refs: given back", 0, small.used);
}

/*
 * format.md 3.3: a file cut at any byte reads up to its last whole chunk, and what was read
 * resolves: a chunk's rows never refer to stacks of a chunk after it.
 */
static void test_cut_everywhere(void)
{
	struct cap_record recs[SAMPLE40_NRECORDS];
	struct capture_image img;
	size_t cut, bad = 0;
	int n, end;

	sample40_records(recs);
	if (capture_image__make(&img, path_in("cut.stk"), recs, SAMPLE40_NRECORDS, 1))
		return (void)T_FAIL("cut: capture", "could not write");
	for (cut = 16; cut < img.len; cut++) {
		int whole = 0;

		while (whole < img.nchunks && img.bounds[whole + 1] <= cut)
			whole++;
		n = read_samples(img.buf, cut, "cut", false, &end);
		if (n != whole || (end != 0 && end != -ENODATA))
			bad++;
	}
	T_EQ_U64("cut at every byte: the whole chunks read and resolve", 0, bad);
	capture_image__free(&img);
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		printf("not ok tmpdir: %s\n", strerror(errno));
		return 1;
	}
	test_samples();
	test_many_intervals();
	test_failed_write();
	test_events();
	test_refs_checked();
	test_cut_everywhere();
	rm_tree(dir);
	T_EXIT();
}
