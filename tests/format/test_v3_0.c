/* SPDX-License-Identifier: MIT */
/*
 * test_v3_0: what format 3.0 changed (docs/format.md 4.8 and 5): an OBJECTS record's symbols are
 * written as varint address deltas, sizes and name lengths. The bytes a writer produces are those
 * the specification gives; records round-trip, the extreme addresses and lengths included; the
 * decoder refuses what lies (a varint over ten bytes or past 64 bits, a delta carrying an
 * address past 2^64, a name past the payload or with a NUL, a count the bytes cannot hold) as
 * EBADMSG; a chunk of a 2.x file is read in the old layout; the file header says 3.0 or later.
 */
#include "craft.h"
#include "helpers.h"
#include "samples_v3_0.h"

static struct craft_payload p;
static char *dir;

static const char *path_in(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* format.md 1.5: unsigned LEB128, written out independently of format/buf.c. */
static struct craft_payload *pl_varint(struct craft_payload *pl, uint64_t v)
{
	do {
		pl->buf[pl->len++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return pl;
}

/* One object without build-id, segments or data; the caller appends nsyms and the symbols. */
static void object_head(void)
{
	pl_reset(&p);
	pl_u32(pl_u32(pl_u32(&p, 1), CAP_OBJ_F_SYMTAB), 0);
	pl_str(pl_str(&p, "/usr/bin/x"), "");
	pl_u32(&p, 0);
}

static void packed_sym(uint64_t delta, uint64_t size, const char *name)
{
	pl_bytes(pl_varint(pl_varint(pl_varint(&p, delta), size), strlen(name)), name,
		 strlen(name));
}

static void test_round_trips(void)
{
	struct cap_symbol edges[] = {
		{ 0, 0, "" },
		{ 0, UINT64_MAX, "zero" },
		{ 0x7f, 0x80, "one-byte delta, two-byte size" },
		{ UINT64_MAX, 1, "top" },
		{ UINT64_MAX, 0, NULL },
	};
	struct cap_object obj = { .path = "/x", .nsyms = 5, .syms = edges };
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS,
				  .objects = { .count = 1, .objs = &obj } };
	struct cap_record recs[SAMPLE30_NRECORDS], *got;

	sample30_records(recs);
	check_round_trip(path_in("rt.stk"), "round trip OBJECTS (the 3.0 samples)", &recs[3]);
	got = round_trip(path_in("rt.stk"), &rec);
	T_CHECK("round trip OBJECTS (addresses 0 and 2^64 - 1, size 2^64 - 1, a NULL name)",
		got && got->objects.objs[0].nsyms == 5 &&
		got->objects.objs[0].syms[1].size == UINT64_MAX &&
		got->objects.objs[0].syms[3].addr == UINT64_MAX &&
		!strcmp(got->objects.objs[0].syms[3].name, "top") &&
		got->objects.objs[0].syms[4].addr == UINT64_MAX &&
		!strcmp(got->objects.objs[0].syms[4].name, ""), "values differ");
	cap_record__free(got);
}

/* format.md 4.8: the writer's bytes, built by hand from the specification. */
static void test_bytes(void)
{
	struct cap_symbol syms[] = {
		{ 0x401000, 0x10, "_start" },
		{ 0x401000, 0, "alias" },
		{ 0x10000401000ull, 0x4000, "far" },
	};
	struct cap_object obj = { .flags = CAP_OBJ_F_SYMTAB, .path = "/usr/bin/x", .debuglink = "",
				  .nsyms = 3, .syms = syms };
	struct cap_record rec = { .type = CAP_CHUNK_OBJECTS,
				  .objects = { .count = 1, .objs = &obj } };
	struct capture_image img;

	object_head();
	pl_u32(&p, 3);
	packed_sym(0x401000, 0x10, "_start");
	packed_sym(0, 0, "alias");
	packed_sym(0x10000000000ull, 0x4000, "far");
	pl_u64(&p, 0);
	if (!T_CHECK("bytes: capture written", !capture_image__make(&img, path_in("bytes.stk"),
		     &rec, 1, 1), "could not write or read back"))
		return;
	T_CHECK("bytes: OBJECTS payload as format.md 4.8 gives it",
		img.plens[0] == p.len && !memcmp(img.payloads[0], p.buf, p.len),
		"%u bytes, want %zu", img.plens[0], p.len);
	/* 0x401000 in groups of seven bits, low first: 0x00, 0x20, 0x00, 0x02 */
	T_CHECK("bytes: first delta is 80 a0 80 02", p.buf[38] == 0x80 && p.buf[39] == 0xa0 &&
		p.buf[40] == 0x80 && p.buf[41] == 0x02, "%02x %02x %02x %02x", p.buf[38],
		p.buf[39], p.buf[40], p.buf[41]);
	capture_image__free(&img);
}

static void test_decode_values(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;
	const struct cap_symbol *s;

	object_head();
	pl_u32(&p, 2);
	packed_sym(0xfffffffffffffff0ull, 8, "near_top");
	packed_sym(0xf, 1, "last_byte");
	pl_u64(&p, 0);
	ch = (struct cap_chunk){ .type = CAP_CHUNK_OBJECTS, .len = (uint32_t)p.len, .data = p.buf };
	T_EQ_INT("decode: deltas up to 2^64 - 1: ok", 0, cap_record__decode(&ch, &rec));
	s = rec ? rec->objects.objs[0].syms : NULL;
	T_CHECK("decode: values", s && s[0].addr == 0xfffffffffffffff0ull && s[0].size == 8 &&
		s[1].addr == UINT64_MAX && !strcmp(s[1].name, "last_byte"), "values differ");
	cap_record__free(rec);

	/* the same bytes as a chunk of a 2.2 file: the fixed layout, which they do not fit */
	ch.major = 2;
	T_EQ_INT("decode: 3.0 bytes as a 2.x chunk: EBADMSG", -EBADMSG,
		 cap_record__decode(&ch, &rec));
	ch.major = CAP_MAJOR + 1;
	T_EQ_INT("decode: a chunk of a newer major: ENOTSUP", -ENOTSUP,
		 cap_record__decode(&ch, &rec));
}

/* One symbol whose address delta is the raw bytes v, size and name length 0: decodes as want. */
static void expect_raw_delta(const char *name, const uint8_t *v, size_t n, int want)
{
	object_head();
	pl_u32(&p, 1);
	pl_bytes(&p, v, n);
	pl_varint(pl_varint(&p, 0), 0);
	pl_u64(&p, 0);
	expect_decode(&p, name, CAP_CHUNK_OBJECTS, want);
}

static void test_malformed(void)
{
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x00 };
	static const uint8_t past_64[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0x02 };
	static const uint8_t ten_max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0x01 };

	expect_raw_delta("varint of 11 bytes: EBADMSG", eleven, sizeof(eleven), -EBADMSG);
	expect_raw_delta("varint past 64 bits: EBADMSG", past_64, sizeof(past_64), -EBADMSG);
	expect_raw_delta("varint of 10 bytes, 2^64 - 1: ok", ten_max, sizeof(ten_max), 0);

	object_head();
	pl_u32(&p, 2);
	packed_sym(0xfffffffffffffff0ull, 0, "a");
	packed_sym(0x10, 0, "b");
	pl_u64(&p, 0);
	expect_decode(&p, "delta past 2^64: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);

	object_head();
	pl_u32(&p, 1);
	pl_varint(pl_varint(pl_varint(&p, 0x1000), 1), 100);
	pl_bytes(&p, "short", 5);
	expect_decode(&p, "name length past the payload: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);

	object_head();
	pl_u32(&p, 1);
	pl_varint(pl_varint(pl_varint(&p, 0x1000), 1), UINT64_MAX);
	pl_u64(&p, 0);
	expect_decode(&p, "name length 2^64 - 1: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);

	object_head();
	pl_u32(&p, 1);
	pl_varint(pl_varint(pl_varint(&p, 0x1000), 1), 3);
	pl_bytes(&p, "a\0b", 3);
	pl_u64(&p, 0);
	expect_decode(&p, "name with a NUL: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);

	object_head();
	pl_u32(&p, 4);
	packed_sym(1, 1, "a");
	pl_u64(&p, 0);
	expect_decode(&p, "nsyms 4 with bytes for 3: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);

	object_head();
	pl_u32(&p, 0xffffffff);
	packed_sym(1, 1, "a");
	pl_u64(&p, 0);
	expect_decode(&p, "nsyms 4G: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);

	object_head();
	pl_u32(&p, 1);
	pl_varint(&p, 1);
	p.buf[p.len++] = 0x80;	/* a size whose last byte is missing */
	expect_decode(&p, "varint cut by the end of the payload: EBADMSG", CAP_CHUNK_OBJECTS,
		      -EBADMSG);

	object_head();
	pl_u32(&p, 1);
	packed_sym(1, 1, "a");
	pl_u64(&p, 0);
	pl_u32(&p, 0);
	expect_decode(&p, "trailing bytes: EBADMSG", CAP_CHUNK_OBJECTS, -EBADMSG);
}

/* format.md 2 and 5: files written now say 3.0 or later (a 2.x reader stops at the header). */
static void test_header(void)
{
	struct cap_record recs[SAMPLE30_NRECORDS];
	struct capture_image img;

	sample30_records(recs);
	if (!T_CHECK("header: capture written", !capture_image__make(&img, path_in("hdr.stk"),
		     recs, SAMPLE30_NRECORDS, 1), "could not write or read back"))
		return;
	T_CHECK("header: file says 3.0 or later", img.buf[8] >= 3 && img.buf[9] == 0 &&
		img.buf[10] == CAP_MINOR && img.buf[11] == 0, "%u %u %u %u", img.buf[8], img.buf[9],
		img.buf[10], img.buf[11]);
	capture_image__free(&img);
}

int main(void)
{
	dir = tmp_dir();
	if (!dir) {
		T_FAIL("setup", "no temporary directory: %s", strerror(errno));
		T_EXIT();
	}
	test_round_trips();
	test_bytes();
	test_decode_values();
	test_malformed();
	test_header();
	rm_tree(dir);
	T_EXIT();
}
