/* SPDX-License-Identifier: MIT */
/*
 * test_v2_2: what format 2.2 added (docs/format.md 3.2 and 5): an interval whose rows ran in two
 * images of one process is several INTERVAL chunks with one seq, start and end, each after the
 * PROCS record of its image. The committed tests/format/compat/v2.2.stk reads back field by
 * field in that order; the parts are one interval for a reader that counts chunks with one seq
 * once (capdump's rule and stkreport's, tests/golden/split); the file header says 2.2 (or later,
 * for files written now).
 */
#include "helpers.h"
#include "samples_v2_2.h"

#define V2_2_PATH "tests/format/compat/v2.2.stk"

static char *dir;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Every record of the committed file against the samples, in file order. */
static void read_all(struct cap_record **got, uint16_t *types)
{
	struct cap_record recs[SAMPLE22_NRECORDS];
	struct cap_reader *r = cap_reader__open(V2_2_PATH);
	struct cap_chunk ch;
	char name[64], why[128];
	int i, ret;

	if (!T_CHECK("v2.2 opens", r, "%s: %s", V2_2_PATH, strerror(errno)))
		return;
	sample22_records(recs);
	for (i = 0; i < SAMPLE22_NRECORDS; i++) {
		snprintf(name, sizeof(name), "v2.2 record %d", i);
		ret = cap_reader__next(r, &ch);
		if (!T_CHECK(name, ret == 1, "next returned %d", ret))
			break;
		types[i] = ch.type;
		ret = cap_record__decode(&ch, &got[i]);
		if (!T_CHECK(name, !ret, "decode: %s", strerror(-ret)))
			continue;
		T_CHECK(name, record_eq(&recs[i], got[i], why, sizeof(why)), "%s", why);
	}
	T_EQ_INT("v2.2 clean end (unknown optional chunk skipped)", 0, cap_reader__next(r, &ch));
	cap_reader__close(r);
}

/* The split interval as written: old image, its part, new image, its part. */
static void check_split(struct cap_record **got, const uint16_t *types)
{
	const struct cap_interval *a, *b;
	const struct cap_process *old, *new;

	if (!got[2] || !got[3] || !got[4] || !got[5])
		return;
	T_CHECK("v2.2 chunk order", types[2] == CAP_CHUNK_PROCS && types[3] == CAP_CHUNK_INTERVAL &&
		types[4] == CAP_CHUNK_PROCS && types[5] == CAP_CHUNK_INTERVAL &&
		types[6] == CAP_CHUNK_LOSSES && types[7] == CAP_CHUNK_INTERVAL, "types differ");
	a = &got[3]->interval;
	b = &got[5]->interval;
	old = &got[2]->procs.procs[0];
	new = &got[4]->procs.procs[0];
	T_CHECK("v2.2 parts share seq, start and end",
		a->seq == 0 && b->seq == 0 && a->start_ns == 22000000000ull &&
		b->start_ns == a->start_ns && a->end_ns == 23000000000ull && b->end_ns == a->end_ns,
		"seq %u/%u", a->seq, b->seq);
	T_CHECK("v2.2 old image before the first part",
		old->pid == 2200 && old->start_time == 21500000000ull &&
		!strcmp(old->comm, "launcher") && !strcmp(old->exe, "/usr/bin/launcher") &&
		old->nmaps == 1 && old->maps[0].start == 0x555555555000ull &&
		old->maps[0].inode == 2201 && old->maps[0].build_id[1] == 0x01 &&
		!strcmp(old->maps[0].path, "/usr/bin/launcher"), "comm %s", old->comm);
	T_CHECK("v2.2 new image before the second part",
		new->pid == 2200 && new->start_time == old->start_time &&
		!strcmp(new->comm, "worker") && !strcmp(new->exe, "/usr/bin/worker") &&
		new->nmaps == 1 && new->maps[0].start == 0x5555deadb000ull &&
		new->maps[0].end == 0x5555deadd000ull && new->maps[0].pgoff == 0x2000 &&
		new->maps[0].build_id[19] == 0x02 && !strcmp(new->maps[0].path, "/usr/bin/worker"),
		"comm %s", new->comm);
	T_CHECK("v2.2 rows of one pid in both parts",
		a->nrows == 1 && a->rows[0].pid == 2200 && !strcmp(a->rows[0].comm, "launcher") &&
		a->rows[0].ustack == 1 && a->rows[0].count == 3 &&
		b->nrows == 2 && b->rows[0].pid == 2200 && !strcmp(b->rows[0].comm, "worker") &&
		b->rows[0].ustack == 2 && b->rows[0].count == 5 && b->rows[1].tid == 2201 &&
		b->rows[1].ustack == 0 && b->rows[1].count == 2, "rows %u/%u", a->nrows, b->nrows);
	T_CHECK("v2.2 both parts carry the whole stack tables",
		a->nkstacks == 1 && b->nkstacks == 1 && a->nustacks == 2 && b->nustacks == 2 &&
		a->ustacks[0].ips[0] == 0x555555555120ull && b->ustacks[1].ips[0] == 0x5555deadb340ull &&
		a->kstacks[0].ips[1] == 0xffffffff81000190ull, "nustacks %u/%u", a->nustacks,
		b->nustacks);
}

/* capdump's and stkreport's rule: a chunk with the seq of the interval chunk before is a part. */
static void check_count(struct cap_record **got, const uint16_t *types)
{
	uint32_t chunks = 0, intervals = 0, last = UINT32_MAX;

	for (int i = 0; i < SAMPLE22_NRECORDS; i++) {
		if (types[i] != CAP_CHUNK_INTERVAL || !got[i])
			continue;
		chunks++;
		intervals += got[i]->interval.seq != last;
		last = got[i]->interval.seq;
	}
	T_EQ_INT("v2.2 interval chunks", 3, chunks);
	T_EQ_INT("v2.2 intervals (the split one once)", 2, intervals);
	if (got[9])
		T_CHECK("v2.2 END counts intervals, not chunks",
			got[9]->end.nintervals == 2 && got[9]->end.events == 17 &&
			got[9]->end.end_ns == 24000000001ull, "nintervals %u",
			got[9]->end.nintervals);
	if (got[8])
		T_CHECK("v2.2 losses of interval 1", got[8]->losses.interval_seq == 1 &&
			got[8]->losses.counts[CAP_LOSS_USTACK_MISSING] == 1, "seq %u",
			got[8]->losses.interval_seq);
}

static void check_meta(struct cap_record **got)
{
	if (!got[0] || !got[1])
		return;
	T_EQ_STR("v2.2 meta host", "build-22", cap_meta_get(&got[0]->meta, "host"));
	T_EQ_STR("v2.2 meta probe", "t:syscalls:sys_enter_getppid", got[0]->meta.probes[0].spec);
	T_CHECK("v2.2 KSYMS_ADD", got[1]->ksyms.count == 2 &&
		got[1]->ksyms.syms[1].addr == 0xffffffff81000180ull &&
		got[1]->ksyms.syms[1].size == 0x40 &&
		!strcmp(got[1]->ksyms.syms[0].name, "do_syscall_64"), "count %u",
		got[1]->ksyms.count);
}

/* format.md 2 and 5: files written now say 2.2 or later; the committed file 2.2. */
static void test_header(void)
{
	struct cap_record recs[SAMPLE22_NRECORDS];
	struct capture_image img;
	struct cap_reader *r;
	uint16_t major = 0, minor = 0;

	sample22_records(recs);
	if (T_CHECK("header: capture written", !capture_image__make(&img, path_in("hdr.stk"),
		    recs, SAMPLE22_NRECORDS, 1), "could not write or read back")) {
		T_CHECK("header: file says 2.2 or later", img.buf[9] == 0 &&
			(img.buf[8] > 2 || (img.buf[8] == 2 && img.buf[10] + (img.buf[11] << 8) >= 2)),
			"%u %u %u %u", img.buf[8], img.buf[9], img.buf[10], img.buf[11]);
		capture_image__free(&img);
	}
	r = cap_reader__open(V2_2_PATH);
	if (r)
		cap_reader__version(r, &major, &minor);
	T_CHECK("header: v2.2.stk says 2.2", major == 2 && minor == 2, "%u.%u", major, minor);
	cap_reader__close(r);
}

int main(void)
{
	struct cap_record *got[SAMPLE22_NRECORDS] = { 0 };
	uint16_t types[SAMPLE22_NRECORDS] = { 0 };

	dir = tmp_dir();
	if (!dir) {
		T_FAIL("setup", "no temporary directory: %s", strerror(errno));
		T_EXIT();
	}
	read_all(got, types);
	check_split(got, types);
	check_count(got, types);
	check_meta(got);
	for (int i = 0; i < SAMPLE22_NRECORDS; i++)
		cap_record__free(got[i]);
	test_header();
	rm_tree(dir);
	T_EXIT();
}
