/* SPDX-License-Identifier: MIT */
/*
 * test_v1_1: the records format 1.1 added (docs/format.md 4.5, 4.7 - 4.9). Each new record
 * round-trips field by field; the writer refuses what the decoder would refuse (unsorted object
 * symbols, a CPU number past CAP_MAX_CPUS, an OBJECTS record over the chunk limit) and writes
 * nothing; the decoder refuses lying payloads (counts larger than the bytes left, duplicated
 * per-CPU kinds, CPUs out of range) with the documented error; and the chunk headers are what a
 * 1.0 reader needs to refuse an EVENTS capture and skip OBJECTS and PERFMAP.
 */
#include "craft.h"
#include "helpers.h"
#include "samples_v1_1.h"

static char *dir;
static struct craft_payload p;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void test_round_trips(void)
{
	struct cap_record recs[SAMPLE11_NRECORDS], *got;
	struct cap_row rows[2] = {
		{ .probe = 3, .pid = 9, .tid = 10, .comm = "x", .count = 4, .ts_ns = 77, .cpu = 2 },
		{ .probe = 3, .pid = 9, .tid = 11, .comm = "y", .count = 5, .ts_ns = 0, .cpu = 0 },
	};
	struct cap_record iv = { .type = CAP_CHUNK_INTERVAL,
				 .interval = { .seq = 4, .nrows = 2, .rows = rows } };
	uint64_t drops[CAP_MAX_CPUS] = { 0 };
	struct cap_record lo = { .type = CAP_CHUNK_LOSSES };
	const char *rt = path_in("rt.stk");

	sample11_records(recs);
	check_round_trip(rt, "round trip EVENTS (ts_ns, cpu up to 4095)", &recs[6]);
	check_round_trip(rt, "round trip OBJECTS (symtab, whole data, empty)", &recs[3]);
	check_round_trip(rt, "round trip PERFMAP (file order kept)", &recs[4]);
	check_round_trip(rt, "round trip LOSSES with per-CPU drops", &recs[7]);
	check_round_trip(rt, "round trip PROCS with PSEUDO_ID and NS_PATH mappings", &recs[2]);

	/* An INTERVAL has no ts_ns/cpu on disk: whatever the caller left there reads back as 0. */
	got = round_trip(rt, &iv);
	T_CHECK("INTERVAL rows decode with ts_ns 0 and cpu 0",
		got && got->interval.nrows == 2 && got->interval.rows[0].ts_ns == 0 &&
		got->interval.rows[0].cpu == 0 && got->interval.rows[0].count == 4,
		"got %p", (void *)got);
	cap_record__free(got);

	/* The highest CPU allowed, alone: ncpus = 4096, everything else 0. */
	drops[CAP_MAX_CPUS - 1] = 42;
	lo.losses.ncpus = CAP_MAX_CPUS;
	lo.losses.cpu_dropped = drops;
	check_round_trip(rt, "round trip LOSSES cpu 4095 only", &lo);

	/* Trailing zero CPUs are not on disk: ncpus comes back as the highest non-zero + 1. */
	drops[CAP_MAX_CPUS - 1] = 0;
	drops[2] = 9;
	got = round_trip(rt, &lo);
	T_CHECK("LOSSES zero CPUs not written, ncpus = last non-zero + 1",
		got && got->losses.ncpus == 3 && got->losses.cpu_dropped[2] == 9 &&
		got->losses.cpu_dropped[0] == 0, "ncpus %u", got ? got->losses.ncpus : 0);
	cap_record__free(got);

	/* No drops at all: NULL, 0 (as capture.h says), and exactly the 1.0-style pairs. */
	drops[2] = 0;
	got = round_trip(rt, &lo);
	T_CHECK("LOSSES without per-CPU drops: ncpus 0, cpu_dropped NULL",
		got && got->losses.ncpus == 0 && !got->losses.cpu_dropped, "ncpus %u",
		got ? got->losses.ncpus : 0);
	cap_record__free(got);

	T_EQ_STR("loss name of EVENTS_DROPPED", "events dropped (ring buffer full)",
		 cap_loss_name(CAP_LOSS_EVENTS_DROPPED));
}

/*
 * format.md 3.2 and 5: the flags a 1.0 reader judges unknown chunks by. Walk the chunk headers
 * by hand as a 1.0 reader would (it knows types 1 to 6): OBJECTS, PERFMAP and LOSSES it reads or
 * skips, EVENTS it must refuse. (Today's writer says 2.x in the file header, which a 1.x reader
 * refuses first: test_v2_0 checks that.)
 */
static void test_chunk_flags(void)
{
	struct cap_record recs[SAMPLE11_NRECORDS];
	static const uint16_t want_flags[SAMPLE11_NRECORDS] = { 1, 1, 1, 0, 0, 1, 1, 0, 1, 0 };
	struct capture_image img;
	const uint8_t *h;
	char name[80];
	int i, refused_at = -1;

	sample11_records(recs);
	if (!T_CHECK("flags: capture written", !capture_image__make(&img, path_in("flags.stk"),
		     recs, SAMPLE11_NRECORDS, 1), "could not write or read back"))
		return;
	for (i = 0; i < SAMPLE11_NRECORDS; i++) {
		h = img.buf + img.bounds[i];
		snprintf(name, sizeof(name), "flags: chunk %d type %u flags bytes", i,
			 recs[i].type);
		T_CHECK(name, h[4] == recs[i].type && h[5] == 0 && h[6] == want_flags[i] &&
			h[7] == 0, "type %02x%02x flags %02x %02x", h[5], h[4], h[6], h[7]);
		if (refused_at < 0 && h[4] > CAP_CHUNK_END && (h[6] & CAP_CHUNK_F_MANDATORY))
			refused_at = i;
	}
	T_EQ_INT("flags: a 1.0 reader stops at the EVENTS chunk (6), skipping OBJECTS, PERFMAP", 6,
		 refused_at);
	capture_image__free(&img);
}

/* A writer refusal leaves the file as it was. */
static void expect_put(const char *name, const struct cap_record *rec, int want)
{
	struct cap_writer *w = cap_writer__open(path_in("refuse.stk"));
	int ret;

	if (!w) {
		T_FAIL(name, "open: %s", strerror(errno));
		return;
	}
	ret = cap_writer__put(w, rec);
	T_CHECK(name, ret == want && cap_writer__size(w) == (want ? 16 : cap_writer__size(w)),
		"expected %d, got %d, size %" PRIu64, want, ret, cap_writer__size(w));
	cap_writer__close(w);
}

static void test_writer_refusals(void)
{
	struct cap_symbol unsorted[2] = { { 0x2000, 1, "b" }, { 0x1000, 1, "a" } };
	struct cap_object obj = { .path = "/x" };
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS,
				  .objects = { .count = 1, .objs = &obj } };
	struct cap_row row = { .comm = "c", .count = 1, .cpu = CAP_MAX_CPUS };
	struct cap_record ev = { .type = CAP_CHUNK_EVENTS,
				 .interval = { .nrows = 1, .rows = &row } };
	uint64_t drops[1] = { 1 };
	struct cap_record lo = { .type = CAP_CHUNK_LOSSES,
				 .losses = { .ncpus = CAP_MAX_CPUS + 1, .cpu_dropped = drops } };
	struct cap_record pm = { .type = CAP_CHUNK_PERFMAP,
				 .perfmap = { .pid = 1, .count = 2, .syms = unsorted } };
	uint8_t *big;

	obj.nsyms = 2;
	obj.syms = unsorted;
	expect_put("write OBJECTS with unsorted symbols: EINVAL", &rec, -EINVAL);
	expect_put("write PERFMAP with unsorted symbols: ok (file order)", &pm, 0);
	obj.nsyms = 0;
	obj.build_id_len = CAP_BUILD_ID_MAX + 1;
	expect_put("write OBJECTS build-id of 33 bytes: EOVERFLOW", &rec, -EOVERFLOW);
	obj.build_id_len = 0;
	obj.data = (uint8_t *)"abc";
	obj.data_len = 3;
	expect_put("write OBJECTS data without WHOLE: EINVAL", &rec, -EINVAL);
	obj.flags = CAP_OBJ_F_WHOLE;
	expect_put("write OBJECTS data with WHOLE: ok", &rec, 0);
	obj.nsegs = 1;
	obj.segs = NULL;
	expect_put("write OBJECTS nsegs 1, segs NULL: EINVAL", &rec, -EINVAL);
	obj.nsegs = 0;

	expect_put("write EVENTS row on cpu 4096: EINVAL", &ev, -EINVAL);
	row.cpu = CAP_MAX_CPUS - 1;
	expect_put("write EVENTS row on cpu 4095: ok", &ev, 0);
	expect_put("write LOSSES ncpus 4097: EOVERFLOW", &lo, -EOVERFLOW);
	lo.losses.ncpus = 1;
	lo.losses.cpu_dropped = NULL;
	expect_put("write LOSSES ncpus 1, cpu_dropped NULL: EINVAL", &lo, -EINVAL);

	/*
	 * format.md 4.8: a whole object as big as a chunk cannot fit with its record around it;
	 * the recorder then embeds it without data. One byte more is refused before any copy
	 * (the buffer is 64 MiB: ASan would see a read past it).
	 */
	big = calloc(1, CAP_MAX_CHUNK_RAW);
	if (!big) {
		printf("skip write OBJECTS over 64 MiB: no memory\n");
		return;
	}
	obj.data = big;
	obj.data_len = CAP_MAX_CHUNK_RAW;
	expect_put("write OBJECTS with 64 MiB of data: EOVERFLOW", &rec, -EOVERFLOW);
	obj.data_len = (uint64_t)CAP_MAX_CHUNK_RAW + 1;
	expect_put("write OBJECTS with 64 MiB + 1 of data: EOVERFLOW", &rec, -EOVERFLOW);
	obj.data_len = CAP_MAX_CHUNK_RAW - 4096;
	expect_put("write OBJECTS with 64 MiB - 4 KiB of data: ok", &rec, 0);
	free(big);
}

/* ---- decoder rules on hand-made payloads ---- */

/* An EVENTS payload with no stacks and one row on cpu, followed by extra rows' worth of bytes. */
static void events_one_row(uint32_t nrows, uint32_t cpu)
{
	pl_reset(&p);
	pl_u32(pl_u64(pl_u64(pl_u32(&p, 1), 10), 20), 0);	/* seq, start, end, nkstacks */
	pl_u32(pl_u32(&p, 0), nrows);				/* nustacks, nrows */
	pl_u32(pl_u32(pl_u32(pl_u32(&p, 0), 5), 6), 0);		/* probe, pid, tid, flags */
	pl_str(&p, "comm");
	pl_u64(pl_u32(pl_u32(&p, 0), 0), 1);			/* kstack, ustack, count */
	pl_u32(pl_u64(&p, 123456789), cpu);			/* ts_ns, cpu */
}

static void test_events(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	events_one_row(1, CAP_MAX_CPUS - 1);
	ch = (struct cap_chunk){ .type = CAP_CHUNK_EVENTS, .len = (uint32_t)p.len, .data = p.buf };
	T_EQ_INT("events one row: ok", 0, cap_record__decode(&ch, &rec));
	T_CHECK("events row values", rec && rec->interval.nrows == 1 &&
		rec->interval.rows[0].ts_ns == 123456789 && rec->interval.rows[0].cpu == 4095 &&
		rec->interval.rows[0].pid == 5 && !strcmp(rec->interval.rows[0].comm, "comm"),
		"values wrong");
	cap_record__free(rec);

	events_one_row(1, CAP_MAX_CPUS);
	expect_decode(&p, "events cpu 4096: EBADMSG", CAP_CHUNK_EVENTS, -EBADMSG);
	events_one_row(1, 0xffffffff);
	expect_decode(&p, "events cpu 4G: EBADMSG", CAP_CHUNK_EVENTS, -EBADMSG);
	events_one_row(2, 0);
	expect_decode(&p, "events nrows 2 with bytes for 1: EBADMSG", CAP_CHUNK_EVENTS, -EBADMSG);
	events_one_row(0x7fffffff, 0);
	expect_decode(&p, "events nrows 2G: EBADMSG", CAP_CHUNK_EVENTS, -EBADMSG);
	events_one_row(1, 0);
	p.len -= 12;	/* an INTERVAL row: no ts_ns, no cpu */
	expect_decode(&p, "events row without ts_ns and cpu: EBADMSG", CAP_CHUNK_EVENTS, -EBADMSG);
	/* The same bytes are a valid INTERVAL. */
	expect_decode(&p, "same row as INTERVAL: ok", CAP_CHUNK_INTERVAL, 0);
	events_one_row(1, 0);
	pl_u32(&p, 0);
	expect_decode(&p, "events trailing bytes: EBADMSG", CAP_CHUNK_EVENTS, -EBADMSG);
}

static void losses_head(uint32_t npairs)
{
	pl_reset(&p);
	pl_u32(pl_u32(&p, 3), npairs);
}

static void pair(uint32_t kind, uint64_t count)
{
	pl_u64(pl_u32(&p, kind), count);
}

static void test_losses(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	losses_head(5);
	pair(CAP_LOSS_EVENTS_DROPPED, 30);
	pair(CAP_LOSS_CPU_BASE + 7, 10);
	pair(CAP_LOSS__COUNT, 99);		/* a future kind: ignored */
	pair(CAP_LOSS_CPU_BASE - 1, 99);	/* idem, just below the per-CPU kinds */
	pair(CAP_LOSS_CPU_BASE + 2, 20);
	ch = (struct cap_chunk){ .type = CAP_CHUNK_LOSSES, .len = (uint32_t)p.len, .data = p.buf };
	T_EQ_INT("losses per-cpu, unsorted, future kinds: ok", 0, cap_record__decode(&ch, &rec));
	T_CHECK("losses per-cpu values (ncpus = 8)", rec && rec->losses.ncpus == 8 &&
		rec->losses.cpu_dropped[7] == 10 && rec->losses.cpu_dropped[2] == 20 &&
		rec->losses.cpu_dropped[0] == 0 && rec->losses.cpu_dropped[3] == 0 &&
		rec->losses.counts[CAP_LOSS_EVENTS_DROPPED] == 30 &&
		rec->losses.interval_seq == 3, "ncpus %u", rec ? rec->losses.ncpus : 0);
	cap_record__free(rec);

	losses_head(2);
	pair(CAP_LOSS_CPU_BASE + 1, 5);
	pair(CAP_LOSS_CPU_BASE + 1, 6);
	expect_decode(&p, "losses duplicated cpu kind: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);
	losses_head(2);
	pair(CAP_LOSS_CPU_BASE + 1, 0);
	pair(CAP_LOSS_CPU_BASE + 1, 0);
	expect_decode(&p, "losses duplicated cpu kind, both zero: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);
	losses_head(2);
	pair(CAP_LOSS_EVENTS_DROPPED, 5);
	pair(CAP_LOSS_EVENTS_DROPPED, 5);
	expect_decode(&p, "losses duplicated EVENTS_DROPPED: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);
	losses_head(1);
	pair(CAP_LOSS_CPU_BASE + CAP_MAX_CPUS, 1);
	expect_decode(&p, "losses cpu 4096: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);
	losses_head(1);
	pair(0xffffffff, 1);
	expect_decode(&p, "losses kind 0xffffffff (cpu out of range): EBADMSG", CAP_CHUNK_LOSSES,
		      -EBADMSG);
	losses_head(1);
	pair(CAP_LOSS_CPU_BASE + CAP_MAX_CPUS - 1, 1);
	expect_decode(&p, "losses cpu 4095: ok", CAP_CHUNK_LOSSES, 0);
	losses_head(3);
	pair(CAP_LOSS_CPU_BASE + 1, 1);
	expect_decode(&p, "losses npairs 3 with bytes for 1: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);
	losses_head(0x40000000);
	pair(CAP_LOSS_CPU_BASE + 4000, 1);
	expect_decode(&p, "losses npairs 1G: EBADMSG", CAP_CHUNK_LOSSES, -EBADMSG);
}

/* One object: flags, build-id, path, debuglink; the caller appends segments, symbols, data. */
static void object_head(uint32_t count, uint32_t flags, uint32_t build_id_len)
{
	static const uint8_t id[64] = { 1, 2, 3 };

	pl_reset(&p);
	pl_u32(pl_u32(pl_u32(&p, count), flags), build_id_len);
	pl_bytes(&p, id, build_id_len > 64 ? 0 : build_id_len);
	pl_str(pl_str(&p, "/usr/bin/x"), "x.debug");
}

static void sym(uint64_t addr, const char *name)
{
	pl_str(pl_u64(pl_u64(&p, addr), 16), name);
}

/* p decoded as an OBJECTS chunk of a 1.1 to 2.2 file: the layout 3.0 readers still read. */
static void expect_objects_2x(const char *name, int want)
{
	expect_decode_major(&p, name, CAP_CHUNK_OBJECTS, 2, want);
}

/* The OBJECTS layout of 1.1 to 2.2 (fixed-size symbols, format.md 4.8). */
static void test_objects(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	object_head(1, CAP_OBJ_F_WHOLE, 20);
	pl_u32(&p, 1);
	pl_u64(pl_u64(pl_u64(pl_u64(&p, 0x1000), 0x401000), 0x100), 0x200);
	pl_u32(&p, 2);
	sym(0x401000, "a");
	sym(0x401000, "a_alias");
	pl_u64(&p, 4);
	pl_bytes(&p, "\0EL\0", 4);
	ch = (struct cap_chunk){ .type = CAP_CHUNK_OBJECTS, .len = (uint32_t)p.len, .data = p.buf,
				 .major = 2 };
	T_EQ_INT("objects one whole object: ok", 0, cap_record__decode(&ch, &rec));
	T_CHECK("objects values", rec && rec->objects.count == 1 &&
		rec->objects.objs[0].build_id_len == 20 && rec->objects.objs[0].build_id[2] == 3 &&
		rec->objects.objs[0].segs[0].memsz == 0x200 && rec->objects.objs[0].nsyms == 2 &&
		!strcmp(rec->objects.objs[0].syms[1].name, "a_alias") &&
		rec->objects.objs[0].data_len == 4 &&
		!memcmp(rec->objects.objs[0].data, "\0EL\0", 4) &&
		(const uint8_t *)rec->objects.objs[0].data != p.buf + p.len - 4 &&
		!strcmp(rec->objects.objs[0].debuglink, "x.debug"), "values wrong");
	cap_record__free(rec);

	object_head(1, 0, 0);
	pl_u32(&p, 0);
	pl_u32(&p, 2);
	sym(0x2000, "b");
	sym(0x1000, "a");
	pl_u64(&p, 0);
	expect_objects_2x("objects unsorted symbols: EBADMSG", -EBADMSG);

	object_head(1, 0, CAP_BUILD_ID_MAX + 1);
	expect_objects_2x("objects build-id of 33 bytes: EOVERFLOW", -EOVERFLOW);

	object_head(0x10000000, 0, 0);
	pl_u32(pl_u32(&p, 0), 0);
	pl_u64(&p, 0);
	expect_objects_2x("objects count 256M with bytes for 1: EBADMSG", -EBADMSG);

	object_head(1, 0, 0);
	pl_u32(&p, 0x7fffffff);
	pl_u64(pl_u64(pl_u64(pl_u64(&p, 0), 0), 0), 0);
	expect_objects_2x("objects nsegs 2G: EBADMSG", -EBADMSG);

	object_head(1, 0, 0);
	pl_u32(pl_u32(&p, 0), 0x7fffffff);
	sym(1, "a");
	expect_objects_2x("objects nsyms 2G: EBADMSG", -EBADMSG);

	object_head(1, CAP_OBJ_F_WHOLE, 0);
	pl_u32(pl_u32(&p, 0), 0);
	pl_u64(&p, 100);
	pl_bytes(&p, "abcd", 4);
	expect_objects_2x("objects data_len past the end: EBADMSG", -EBADMSG);

	object_head(1, CAP_OBJ_F_WHOLE, 0);
	pl_u32(pl_u32(&p, 0), 0);
	pl_u64(&p, (uint64_t)CAP_MAX_CHUNK_RAW + 1);
	expect_objects_2x("objects data_len over 64 MiB: EOVERFLOW", -EOVERFLOW);

	object_head(1, CAP_OBJ_F_WHOLE, 0);
	pl_u32(pl_u32(&p, 0), 0);
	pl_u64(&p, 0xffffffffffffffffull);
	expect_objects_2x("objects data_len 2^64-1: EOVERFLOW", -EOVERFLOW);

	object_head(1, CAP_OBJ_F_SYMTAB, 0);
	pl_u32(pl_u32(&p, 0), 0);
	pl_u64(&p, 4);
	pl_bytes(&p, "abcd", 4);
	expect_objects_2x("objects data without WHOLE: EBADMSG", -EBADMSG);

	object_head(1, 0, 0);
	pl_u32(pl_u32(&p, 0), 1);
	pl_u64(pl_u64(&p, 1), 1);
	pl_u32(&p, 3);
	pl_bytes(&p, "a\0b", 3);
	pl_u64(&p, 0);
	expect_objects_2x("objects symbol name with a NUL: EBADMSG", -EBADMSG);

	object_head(1, 0, 0);
	pl_u32(pl_u32(&p, 0), 0);
	expect_objects_2x("objects missing data_len: EBADMSG", -EBADMSG);
}

static void test_perfmap(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	pl_reset(&p);
	pl_u32(pl_u64(pl_u32(&p, 77), 5), 2);
	sym(0x9000, "later");
	sym(0x1000, "earlier");
	ch = (struct cap_chunk){ .type = CAP_CHUNK_PERFMAP, .len = (uint32_t)p.len, .data = p.buf };
	T_EQ_INT("perfmap unsorted: ok", 0, cap_record__decode(&ch, &rec));
	T_CHECK("perfmap values in file order", rec && rec->perfmap.pid == 77 &&
		rec->perfmap.start_time == 5 && rec->perfmap.count == 2 &&
		rec->perfmap.syms[0].addr == 0x9000 &&
		!strcmp(rec->perfmap.syms[1].name, "earlier"),
		"values wrong");
	cap_record__free(rec);

	pl_reset(&p);
	pl_u32(pl_u64(pl_u32(&p, 77), 5), 0x10000000);
	sym(0x9000, "only");
	expect_decode(&p, "perfmap count 256M with one symbol: EBADMSG", CAP_CHUNK_PERFMAP, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u64(pl_u32(&p, 77), 5), 1);
	pl_u64(pl_u64(&p, 1), 1);
	pl_u32(&p, 0xfffffff0);
	expect_decode(&p, "perfmap name length past the end: EBADMSG", CAP_CHUNK_PERFMAP, -EBADMSG);

	pl_reset(&p);
	pl_u32(pl_u64(pl_u32(&p, 77), 5), 0);
	expect_decode(&p, "perfmap empty: ok", CAP_CHUNK_PERFMAP, 0);
	pl_u32(&p, 0);
	expect_decode(&p, "perfmap trailing bytes: EBADMSG", CAP_CHUNK_PERFMAP, -EBADMSG);
}

int main(void)
{
	dir = tmp_dir();
	if (!T_CHECK("temporary directory", dir, "%s", strerror(errno)))
		T_EXIT();
	test_round_trips();
	test_chunk_flags();
	test_writer_refusals();
	test_events();
	test_losses();
	test_objects();
	test_perfmap();
	rm_tree(dir);
	T_EXIT();
}
