/* SPDX-License-Identifier: MIT */
/*
 * test_v2_0: what format 2.0 added (docs/format.md 4.10 and 5). KSYMS_ADD records round-trip
 * field by field, sizes included; the writer refuses what the decoder refuses (unsorted symbols,
 * overlapping ranges, aliases, size 0, a range past 2^64) and writes nothing; the decoder refuses
 * lying payloads with the documented error; and the file header says major 2, so that a 1.x
 * reader refuses the file before its first KSYMS_ADD chunk, which is mandatory.
 */
#include "craft.h"
#include "helpers.h"
#include "samples_v2_0.h"

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
	struct cap_record recs[SAMPLE20_NRECORDS];
	struct cap_ksym top[] = { { .addr = 0, .size = UINT64_MAX, .name = "all_but_the_last" },
				  { .addr = UINT64_MAX, .size = 1, .name = "last_byte" } };
	struct cap_record rec = { .type = CAP_CHUNK_KSYMS_ADD,
				  .ksyms = { .count = 2, .syms = top } };
	const char *rt = path_in("rt.stk");

	sample20_records(recs);
	check_round_trip(rt, "round trip KSYMS_ADD (size 1, range to the top, module)", &recs[1]);
	check_round_trip(rt, "round trip KSYMS_ADD (bpf program)", &recs[5]);
	check_round_trip(rt, "round trip KSYMS_ADD (HIDDEN, no symbols)", &recs[8]);
	check_round_trip(rt, "round trip KSYMS_ADD (address 0, size 2^64 - 1, then the last byte)",
			 &rec);
}

/*
 * format.md 2, 3.2 and 5: the header says major 2 or later (a 1.x reader stops there), and
 * KSYMS_ADD chunks carry MANDATORY (a reader that knows 2.0 but not KSYMS_ADD, which cannot
 * exist, would stop).
 */
static void test_chunk_flags(void)
{
	struct cap_record recs[SAMPLE20_NRECORDS];
	static const uint16_t want_flags[SAMPLE20_NRECORDS] = { 1, 1, 1, 1, 0, 1, 1, 0, 1, 0 };
	struct capture_image img;
	const uint8_t *h;
	char name[80];
	int i;

	sample20_records(recs);
	if (!T_CHECK("flags: capture written", !capture_image__make(&img, path_in("flags.stk"),
		     recs, SAMPLE20_NRECORDS, 1), "could not write or read back"))
		return;
	T_CHECK("flags: file header says major 2 or later", img.buf[8] >= 2 && img.buf[9] == 0 &&
		img.buf[10] == CAP_MINOR && img.buf[11] == 0, "%u %u %u %u", img.buf[8],
		img.buf[9], img.buf[10], img.buf[11]);
	for (i = 0; i < SAMPLE20_NRECORDS; i++) {
		h = img.buf + img.bounds[i];
		snprintf(name, sizeof(name), "flags: chunk %d type %u flags bytes", i,
			 recs[i].type);
		T_CHECK(name, h[4] == recs[i].type && h[5] == 0 && h[6] == want_flags[i] &&
			h[7] == 0, "type %02x%02x flags %02x %02x", h[5], h[4], h[6], h[7]);
	}
	capture_image__free(&img);
}

/* A writer refusal leaves the file as it was. */
static void expect_put(const char *name, struct cap_ksym *syms, uint32_t n, int want)
{
	struct cap_record rec = { .type = CAP_CHUNK_KSYMS_ADD,
				  .ksyms = { .count = n, .syms = syms } };
	struct cap_writer *w = cap_writer__open(path_in("refuse.stk"));
	int ret;

	if (!w) {
		T_FAIL(name, "open: %s", strerror(errno));
		return;
	}
	ret = cap_writer__put(w, &rec);
	T_CHECK(name, ret == want && cap_writer__size(w) == (want ? 16 : cap_writer__size(w)),
		"expected %d, got %d, size %" PRIu64, want, ret, cap_writer__size(w));
	cap_writer__close(w);
}

static void test_writer_refusals(void)
{
	struct cap_ksym s[2] = { { .addr = 0x2000, .size = 0x10, .name = "b" },
				 { .addr = 0x1000, .size = 0x10, .name = "a" } };

	expect_put("write KSYMS_ADD unsorted: EINVAL", s, 2, -EINVAL);
	s[1].addr = 0x2000;
	expect_put("write KSYMS_ADD two symbols at one address: EINVAL", s, 2, -EINVAL);
	s[1].addr = 0x200f;
	expect_put("write KSYMS_ADD ranges overlapping by one byte: EINVAL", s, 2, -EINVAL);
	s[1].addr = 0x2010;
	expect_put("write KSYMS_ADD adjacent ranges: ok", s, 2, 0);
	s[1].size = 0;
	expect_put("write KSYMS_ADD size 0: EINVAL", s, 2, -EINVAL);
	s[1].addr = UINT64_MAX - 0xf;
	s[1].size = 0x11;
	expect_put("write KSYMS_ADD range past 2^64: EINVAL", s, 2, -EINVAL);
	s[1].size = 0x10;
	expect_put("write KSYMS_ADD range ending at 2^64: ok", s, 2, 0);
	expect_put("write KSYMS_ADD count 1, syms NULL: EINVAL", NULL, 1, -EINVAL);
	expect_put("write KSYMS_ADD count 0: ok", NULL, 0, 0);
}

/* ---- decoder rules on hand-made payloads (format.md 4.10) ---- */

static void head(uint32_t flags, uint32_t count)
{
	pl_reset(&p);
	pl_u32(pl_u32(&p, flags), count);
}

static void sym(uint64_t addr, uint64_t size, const char *name, const char *module)
{
	pl_str(pl_str(pl_u64(pl_u64(&p, addr), size), name), module);
}

static void test_decoder(void)
{
	struct cap_chunk ch;
	struct cap_record *rec = NULL;

	head(CAP_KSYMS_F_HIDDEN | 0x80, 2);
	sym(0x1000, 0x10, "a", "");
	sym(0x1010, 0x20, "b", "mod");
	ch = (struct cap_chunk){ .type = CAP_CHUNK_KSYMS_ADD, .len = (uint32_t)p.len,
				 .data = p.buf };
	T_EQ_INT("ksyms_add adjacent ranges, unknown flag bit: ok", 0,
		 cap_record__decode(&ch, &rec));
	T_CHECK("ksyms_add values: empty module NULL, sizes, flags kept",
		rec && rec->ksyms.count == 2 && !rec->ksyms.syms[0].module &&
		!strcmp(rec->ksyms.syms[1].module, "mod") && rec->ksyms.syms[0].size == 0x10 &&
		rec->ksyms.syms[1].addr == 0x1010 && rec->ksyms.syms[1].size == 0x20 &&
		rec->ksyms.flags == (CAP_KSYMS_F_HIDDEN | 0x80), "values differ");
	cap_record__free(rec);

	head(0, 2);
	sym(0x2000, 0x10, "b", "");
	sym(0x1000, 0x10, "a", "");
	expect_decode(&p, "ksyms_add unsorted: EBADMSG", CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	head(0, 2);
	sym(0x1000, 0x10, "a", "");
	sym(0x1000, 0x10, "alias", "");
	expect_decode(&p, "ksyms_add equal addresses: EBADMSG", CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	head(0, 2);
	sym(0x1000, 0x11, "a", "");
	sym(0x1010, 0x10, "b", "");
	expect_decode(&p, "ksyms_add overlapping by one byte: EBADMSG", CAP_CHUNK_KSYMS_ADD,
		      -EBADMSG);

	head(0, 1);
	sym(0x1000, 0, "a", "");
	expect_decode(&p, "ksyms_add size 0: EBADMSG", CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	head(0, 1);
	sym(0xfffffffffffff000ull, 0x1001, "a", "");
	expect_decode(&p, "ksyms_add range past 2^64: EBADMSG", CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	head(0, 2);
	sym(0xffffffffffffe000ull, 0x1000, "a", "");
	sym(0xfffffffffffff000ull, 0x1000, "b", "");
	expect_decode(&p, "ksyms_add range ending at 2^64: ok", CAP_CHUNK_KSYMS_ADD, 0);

	head(0, 2);
	sym(0, UINT64_MAX, "a", "");
	sym(UINT64_MAX, 1, "b", "");
	expect_decode(&p, "ksyms_add the whole address space in two: ok", CAP_CHUNK_KSYMS_ADD, 0);

	/* min 24 bytes each: 0x40000000 symbols cannot fit in 30 bytes */
	head(0, 0x40000000);
	sym(0x1000, 1, "a", "");
	expect_decode(&p, "ksyms_add count 1G with one symbol: EBADMSG", CAP_CHUNK_KSYMS_ADD,
		      -EBADMSG);

	/* 24 bytes left hold exactly one empty symbol: a count of 2 lies */
	head(0, 2);
	sym(0x1000, 1, "", "");
	expect_decode(&p, "ksyms_add count 2 with one minimal symbol: EBADMSG",
		      CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	/* a KSYMS payload (no sizes) read as KSYMS_ADD: the names become sizes and lengths */
	head(0, 1);
	pl_str(pl_str(pl_u64(&p, 0x1000), "a"), "");
	expect_decode(&p, "ksyms_add given a KSYMS payload: EBADMSG", CAP_CHUNK_KSYMS_ADD,
		      -EBADMSG);

	head(0, 1);
	pl_u64(pl_u64(&p, 0x1000), 1);
	pl_u32(&p, 3);
	pl_bytes(&p, "a\0b", 3);
	pl_str(&p, "");
	expect_decode(&p, "ksyms_add name with a NUL: EBADMSG", CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	head(0, 0);
	pl_u32(&p, 0);
	expect_decode(&p, "ksyms_add trailing bytes: EBADMSG", CAP_CHUNK_KSYMS_ADD, -EBADMSG);

	head(0, 1);
	pl_u64(pl_u64(&p, 0x1000), 1);
	expect_decode(&p, "ksyms_add cut after the size: EBADMSG", CAP_CHUNK_KSYMS_ADD,
		      -EBADMSG);

	head(0, 0);
	expect_decode(&p, "ksyms_add empty: ok", CAP_CHUNK_KSYMS_ADD, 0);
}

int main(void)
{
	dir = tmp_dir();
	if (!T_CHECK("temporary directory", dir, "%s", strerror(errno)))
		T_EXIT();
	test_round_trips();
	test_chunk_flags();
	test_writer_refusals();
	test_decoder();
	rm_tree(dir);
	T_EXIT();
}
