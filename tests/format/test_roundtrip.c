/* SPDX-License-Identifier: MIT */
/*
 * test_roundtrip: write records, read them back, compare every field; the empty capture; the
 * deepest stack; many rows; what the writer refuses; metadata and name lookups.
 */
#include <fcntl.h>
#include <stdint.h>

#include "helpers.h"
#include "samples.h"

static char *dir;

static char *path_in(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

/* Write recs to a file, read it back; each decoded record must equal the one written. */
static void roundtrip(const char *name, const struct cap_record *recs, int n)
{
	struct cap_reader *r = NULL;
	struct cap_writer *w;
	struct cap_record *got;
	struct cap_chunk ch;
	char t[128], why[128];
	int i, ret;

	w = cap_writer__open(path_in(name));
	if (!w) {
		T_FAIL(name, "cap_writer__open: %s", strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		ret = cap_writer__put(w, &recs[i]);
		if (ret) {
			T_FAIL(name, "put record %d: %s", i, strerror(-ret));
			goto out;
		}
	}
	snprintf(t, sizeof(t), "%s finish", name);
	T_EQ_INT(t, 0, cap_writer__finish(w));
	r = cap_reader__open(path_in(name));
	if (!r) {
		T_FAIL(name, "cap_reader__open: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++) {
		ret = cap_reader__next(r, &ch);
		if (ret != 1) {
			T_FAIL(name, "chunk %d: next returned %d", i, ret);
			goto out;
		}
		snprintf(t, sizeof(t), "%s chunk %d index/type/flags", name, i);
		T_CHECK(t, ch.index == (uint32_t)i && ch.type == recs[i].type &&
			ch.flags == (recs[i].type <= CAP_CHUNK_INTERVAL ? CAP_CHUNK_F_MANDATORY
								      : 0),
			"index %u type %u flags %u", ch.index, ch.type, ch.flags);
		ret = cap_record__decode(&ch, &got);
		if (ret) {
			T_FAIL(name, "decode chunk %d: %s", i, strerror(-ret));
			goto out;
		}
		snprintf(t, sizeof(t), "%s record %d", name, i);
		T_CHECK(t, record_eq(&recs[i], got, why, sizeof(why)), "%s", why);
		cap_record__free(got);
	}
	snprintf(t, sizeof(t), "%s clean end", name);
	T_EQ_INT(t, 0, cap_reader__next(r, &ch));
	snprintf(t, sizeof(t), "%s end is sticky", name);
	T_EQ_INT(t, 0, cap_reader__next(r, &ch));
out:
	cap_reader__close(r);
	cap_writer__close(w);
}

static void test_empty_capture(void)
{
	/* Files written now say 4.2 (format.md 5). */
	static const uint8_t want[16] = { 'S', 'T', 'K', 'C', 'A', 'P', '\r', '\n', 4, 0, 2, 0 };
	struct cap_writer *w = cap_writer__open(path_in("empty.stk"));
	struct cap_reader *r;
	struct cap_chunk ch;
	uint16_t major, minor;
	uint8_t *buf;
	size_t len = 0;

	if (!T_CHECK("empty writer open", w, "%s", strerror(errno)))
		return;
	T_EQ_U64("empty writer size", 16, cap_writer__size(w));
	cap_writer__close(w);
	buf = slurp(path_in("empty.stk"), &len);
	T_EQ_U64("empty file is the 16-byte header", 16, len);
	/* format.md 2: magic, 4, 2, then CRC32C of those 12 bytes, all little-endian. */
	T_CHECK("empty header bytes", buf && len == 16 && !memcmp(buf, want, 12) &&
		buf[12] + (buf[13] << 8) + (buf[14] << 16) + ((uint32_t)buf[15] << 24) ==
			cap_crc32c(0, want, 12), "header differs");
	free(buf);
	r = cap_reader__open(path_in("empty.stk"));
	if (!T_CHECK("empty reader open", r, "%s", strerror(errno)))
		return;
	cap_reader__version(r, &major, &minor);
	T_CHECK("empty version", major == CAP_MAJOR && minor == CAP_MINOR, "%u.%u", major, minor);
	T_EQ_INT("empty next", 0, cap_reader__next(r, &ch));
	cap_reader__close(r);
}

static void test_samples(void)
{
	struct cap_record recs[SAMPLE_NRECORDS];

	sample_records(recs);
	roundtrip("samples", recs, SAMPLE_NRECORDS);
}

static void test_empty_records(void)
{
	struct cap_record recs[6] = {
		{ .type = CAP_CHUNK_META },	{ .type = CAP_CHUNK_KSYMS },
		{ .type = CAP_CHUNK_PROCS },	{ .type = CAP_CHUNK_INTERVAL },
		{ .type = CAP_CHUNK_LOSSES },	{ .type = CAP_CHUNK_END },
	};

	recs[1].ksyms.flags = CAP_KSYMS_F_HIDDEN;
	roundtrip("empty records", recs, 6);
}

static void test_deep_stack(void)
{
	static uint64_t ips[CAP_MAX_STACK_DEPTH + 1];
	struct cap_stack st = { .flags = CAP_STACK_F_TRUNCATED, .nips = CAP_MAX_STACK_DEPTH,
				.ips = ips };
	struct cap_row row = { .pid = 1, .tid = 1, .comm = "deep", .ustack = 1, .count = 3 };
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };
	struct cap_writer *w;
	uint32_t i;

	for (i = 0; i <= CAP_MAX_STACK_DEPTH; i++)
		ips[i] = 0x400000ull + i * 0x10001ull;
	rec.interval.nustacks = 1;
	rec.interval.ustacks = &st;
	rec.interval.nrows = 1;
	rec.interval.rows = &row;
	roundtrip("max depth stack", &rec, 1);

	st.nips = CAP_MAX_STACK_DEPTH + 1;
	w = cap_writer__open(path_in("toodeep.stk"));
	T_EQ_INT("writer refuses depth > max", -EOVERFLOW, cap_writer__put(w, &rec));
	T_EQ_U64("refused record writes nothing", 16, cap_writer__size(w));
	cap_writer__close(w);
}

/* 200000 rows over 5000 stacks: several MiB of payload, lz4 blocks beyond the first. */
static void test_many_rows(void)
{
	enum { NSTACKS = 5000, NROWS = 200000, DEPTH = 20 };
	struct cap_record rec = { .type = CAP_CHUNK_INTERVAL };
	struct cap_stack *st = calloc(NSTACKS, sizeof(*st));
	struct cap_row *rows = calloc(NROWS, sizeof(*rows));
	uint64_t *ips = calloc((size_t)NSTACKS * DEPTH, sizeof(*ips));
	uint32_t i;

	if (!st || !rows || !ips) {
		T_FAIL("many rows", "out of memory");
		goto out;
	}
	for (i = 0; i < NSTACKS * DEPTH; i++)
		ips[i] = 0xffffffff81000000ull + (uint64_t)i * 2654435761u % 0x1000000;
	for (i = 0; i < NSTACKS; i++) {
		st[i].nips = 1 + i % DEPTH;
		st[i].ips = ips + (size_t)i * DEPTH;
	}
	for (i = 0; i < NROWS; i++) {
		rows[i].probe = i % 3;
		rows[i].pid = 1000 + i / 7;
		rows[i].tid = 1000 + i;
		snprintf(rows[i].comm, sizeof(rows[i].comm), "t%u", i);
		rows[i].kstack = i % (NSTACKS + 1);
		rows[i].count = (uint64_t)i * i;
	}
	rec.interval.seq = 7;
	rec.interval.nkstacks = NSTACKS;
	rec.interval.kstacks = st;
	rec.interval.nrows = NROWS;
	rec.interval.rows = rows;
	roundtrip("many rows", &rec, 1);
out:
	free(st);
	free(rows);
	free(ips);
}

static void test_writer_refuses(void)
{
	struct cap_ksym syms[2] = { { 0x2000, "b", NULL }, { 0x1000, "a", NULL } };
	struct cap_mapping maps[2] = { { .start = 0x2000, .end = 0x3000 },
				       { .start = 0x1000, .end = 0x2000 } };
	struct cap_process proc = { .pid = 1, .comm = "x", .nmaps = 1, .maps = maps };
	struct cap_row row = { .comm = "x", .kstack = 1 };
	struct cap_record rec;
	struct cap_writer *w = cap_writer__open(path_in("refuse.stk"));

	if (!T_CHECK("refuse open", w, "%s", strerror(errno)))
		return;
	rec = (struct cap_record){ .type = CAP_CHUNK_KSYMS, .ksyms = { .count = 2, .syms = syms } };
	T_EQ_INT("writer refuses unsorted ksyms", -EINVAL, cap_writer__put(w, &rec));
	rec = (struct cap_record){ .type = CAP_CHUNK_PROCS,
				   .procs = { .count = 1, .procs = &proc } };
	maps[0].build_id_len = CAP_BUILD_ID_MAX + 1;
	T_EQ_INT("writer refuses long build-id", -EOVERFLOW, cap_writer__put(w, &rec));
	maps[0].build_id_len = 0;
	maps[0].end = 0x1000;
	T_EQ_INT("writer refuses end < start", -EINVAL, cap_writer__put(w, &rec));
	maps[0].end = 0x3000;
	proc.nmaps = 2;
	T_EQ_INT("writer refuses unsorted maps", -EINVAL, cap_writer__put(w, &rec));
	proc.nmaps = 1;
	proc.comm = "0123456789abcdef";
	T_EQ_INT("writer refuses 16-byte process comm", -EOVERFLOW, cap_writer__put(w, &rec));
	rec = (struct cap_record){ .type = CAP_CHUNK_INTERVAL,
				   .interval = { .nrows = 1, .rows = &row } };
	T_EQ_INT("writer refuses stack index past table", -EINVAL, cap_writer__put(w, &rec));
	row.kstack = 0;
	memset(row.comm, 'x', sizeof(row.comm));
	T_EQ_INT("writer refuses unterminated row comm", -EOVERFLOW, cap_writer__put(w, &rec));
	rec = (struct cap_record){ .type = 99 };
	T_EQ_INT("writer refuses unknown record type", -EINVAL, cap_writer__put(w, &rec));
	rec = (struct cap_record){ .type = CAP_CHUNK_META, .meta = { .nkv = 1, .kv = NULL } };
	T_EQ_INT("writer refuses NULL array", -EINVAL, cap_writer__put(w, &rec));
	T_EQ_U64("refused records write nothing", 16, cap_writer__size(w));
	T_EQ_INT("raw chunk over the limit", -EOVERFLOW,
		 cap_writer__put_raw(w, 50, 0, "", (size_t)CAP_MAX_CHUNK_RAW + 1));
	cap_writer__close(w);
}

/* The largest chunk, all zeros: lz4's best ratio must pass the reader's 255:1 sanity check. */
static void test_largest_chunk(void)
{
	uint8_t *zeros = calloc(1, CAP_MAX_CHUNK_RAW);
	struct cap_writer *w = cap_writer__open(path_in("zeros.stk"));
	struct cap_reader *r = NULL;
	struct cap_chunk ch;
	int ret;

	if (!zeros || !w) {
		T_FAIL("largest chunk", "setup failed");
		goto out;
	}
	T_EQ_INT("largest chunk written", 0,
		 cap_writer__put_raw(w, CAP_CHUNK_END, 0, zeros, CAP_MAX_CHUNK_RAW));
	r = cap_reader__open(path_in("zeros.stk"));
	ret = r ? cap_reader__next(r, &ch) : -errno;
	T_CHECK("largest chunk of zeros read back", ret == 1 && ch.len == CAP_MAX_CHUNK_RAW &&
		!memcmp(ch.data, zeros, CAP_MAX_CHUNK_RAW), "next returned %d", ret);
	printf("# 64 MiB of zeros stored in %" PRIu64 " bytes\n", cap_writer__size(w));
out:
	cap_reader__close(r);
	cap_writer__close(w);
	free(zeros);
}

/* A chunk with an empty payload is a valid chunk (its record may still be malformed). */
static void test_empty_payload(void)
{
	struct cap_writer *w = cap_writer__open(path_in("emptypayload.stk"));
	struct cap_reader *r = NULL;
	struct cap_record *rec = NULL;
	struct cap_chunk ch;
	int ret;

	if (!w) {
		T_FAIL("empty payload", "open: %s", strerror(errno));
		return;
	}
	T_EQ_INT("empty payload written", 0, cap_writer__put_raw(w, CAP_CHUNK_END, 0, NULL, 0));
	r = cap_reader__open(path_in("emptypayload.stk"));
	ret = r ? cap_reader__next(r, &ch) : -errno;
	T_CHECK("empty payload read back", ret == 1 && ch.len == 0 && ch.index == 0,
		"next returned %d", ret);
	T_EQ_INT("empty END payload is malformed", -EBADMSG,
		 ret == 1 ? cap_record__decode(&ch, &rec) : 0);
	T_CHECK("no record on error", !rec, "record returned");
	cap_reader__close(r);
	cap_writer__close(w);
}

static void test_lookups(void)
{
	struct cap_meta m = { .nkv = sizeof(sample_kv) / sizeof(sample_kv[0]), .kv = sample_kv };
	unsigned int k;
	bool distinct = true;

	T_EQ_STR("meta_get host", "build-01", cap_meta_get(&m, "host"));
	T_EQ_STR("meta_get empty value", "", cap_meta_get(&m, "empty"));
	T_CHECK("meta_get missing", !cap_meta_get(&m, "nope"), "not NULL");
	T_EQ_STR("loss name", "kernel stacks lost (stack map full or collision)",
		 cap_loss_name(CAP_LOSS_KSTACK_COLLISION));
	T_EQ_STR("unknown loss name", "unknown loss", cap_loss_name(CAP_LOSS__COUNT));
	for (k = 0; k < CAP_LOSS__COUNT; k++)
		if (!strcmp(cap_loss_name(k), "unknown loss") ||
		    (k && !strcmp(cap_loss_name(k), cap_loss_name(k - 1))))
			distinct = false;
	T_CHECK("every loss kind named", distinct, "a kind lacks a name");
	T_EQ_STR("probe kind name", "tracepoint", cap_probe_kind_name(CAP_PROBE_TRACEPOINT));
	T_EQ_STR("unknown probe kind", "unknown probe kind", cap_probe_kind_name(0));
}

static void test_open_errors(void)
{
	struct cap_reader *r;
	int fd;

	errno = 0;
	r = cap_reader__open(path_in("missing.stk"));
	T_CHECK("open missing file: ENOENT", !r && errno == ENOENT, "errno %d", errno);
	fd = open(path_in("zero.stk"), O_CREAT | O_WRONLY, 0600);
	close(fd);
	errno = 0;
	r = cap_reader__open(path_in("zero.stk"));
	T_CHECK("open empty file: ENODATA", !r && errno == ENODATA, "errno %d", errno);
	errno = 0;
	r = cap_reader__open(dir);
	T_CHECK("open directory: EISDIR", !r && errno == EISDIR, "errno %d", errno);
	errno = 0;
	r = cap_reader__open_mem("", 0);
	T_CHECK("open_mem empty: ENODATA", !r && errno == ENODATA, "errno %d", errno);
	errno = 0;
	r = cap_reader__open_mem("STKCAP\r\n\1\0\0\0\0\0\0\0", 16);
	T_CHECK("open_mem bad header crc: EBADMSG", !r && errno == EBADMSG, "errno %d", errno);
	errno = 0;
	r = cap_reader__open_mem("STKCAQ\r\n\1\0\0\0\0\0\0\0", 16);
	T_CHECK("open_mem bad magic: EINVAL", !r && errno == EINVAL, "errno %d", errno);
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		T_FAIL("tmpdir", "mkdtemp: %s", strerror(errno));
		T_EXIT();
	}
	test_empty_capture();
	test_samples();
	test_empty_records();
	test_deep_stack();
	test_many_rows();
	test_writer_refuses();
	test_largest_chunk();
	test_empty_payload();
	test_lookups();
	test_open_errors();
	rm_tree(dir);
	T_EXIT();
}
