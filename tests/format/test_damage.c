/* SPDX-License-Identifier: MIT */
/*
 * test_damage: a capture cut at every byte offset (recorder killed, disk full) and a capture with
 * every single byte damaged (three different flips each). The reader must return exactly the
 * chunks complete and intact before the damage, byte for byte, then the right error naming the
 * right chunk, and never a chunk that differs from what was written. Every returned chunk is
 * also decoded (under ASan this is a small deterministic fuzz run).
 */
#include "helpers.h"
#include "samples.h"

#define MAX_REPORTS 20

static int reports;

/* Print at most MAX_REPORTS failures of a loop of thousands of checks. */
#define LOOP_FAIL(name, ...)                                                               \
	do {                                                                               \
		if (reports++ < MAX_REPORTS)                                               \
			T_FAIL(name, __VA_ARGS__);                                         \
		else                                                                       \
			test_failures++;                                                   \
	} while (0)

/* Which chunk an offset falls in (bounds[k] <= off < bounds[k + 1]). */
static int chunk_of(const struct capture_image *img, uint64_t off)
{
	int k;

	for (k = 0; k < img->nchunks; k++)
		if (off < img->bounds[k + 1])
			return k;
	return img->nchunks;
}

/*
 * Read a damaged copy: chunks before `good` must come back identical, then expect an error (or 0
 * when expect_err is 0) at chunk `good`. Returns false and reports on any difference.
 */
static bool read_damaged(const char *name, const struct capture_image *img, const uint8_t *buf,
			 size_t len, int good, int *err_out, uint64_t where)
{
	struct cap_reader *r = cap_reader__open_mem(buf, len);
	struct cap_record *rec;
	struct cap_chunk ch;
	int k = 0, ret;
	bool ok = true;

	if (!r) {
		*err_out = -errno;
		return true;
	}
	while ((ret = cap_reader__next(r, &ch)) == 1) {
		if (k >= good || ch.len != img->plens[k] || ch.index != (uint32_t)k ||
		    ch.offset != img->bounds[k] || memcmp(ch.data, img->payloads[k], ch.len)) {
			LOOP_FAIL(name, "damage at %" PRIu64 ": chunk %d returned but differs or "
				  "lies past the damage (chunk %d)", where, k, good);
			ok = false;
			break;
		}
		if (cap_record__decode(&ch, &rec) == 0)
			cap_record__free(rec);
		k++;
	}
	if (ok && ret != 1) {
		if (k != good) {
			LOOP_FAIL(name, "damage at %" PRIu64 ": %d chunks read, expected %d", where,
				  k, good);
			ok = false;
		} else if (ret < 0 && (cap_reader__chunk_index(r) != (uint32_t)good ||
				       cap_reader__offset(r) != img->bounds[good])) {
			LOOP_FAIL(name, "damage at %" PRIu64 ": error names chunk %u at %" PRIu64
				  ", expected %d at %" PRIu64, where, cap_reader__chunk_index(r),
				  cap_reader__offset(r), good, img->bounds[good]);
			ok = false;
		} else if (cap_reader__next(r, &ch) != ret) {
			LOOP_FAIL(name, "damage at %" PRIu64 ": error not sticky", where);
			ok = false;
		}
	}
	*err_out = ret;
	cap_reader__close(r);
	return ok;
}

static void test_truncate(const struct capture_image *img, const char *name)
{
	size_t cut;
	int checked = 0;

	reports = 0;
	for (cut = 0; cut <= img->len; cut++) {
		/* An exact-size copy, so ASan catches a read past the cut. */
		uint8_t *copy = malloc(cut ? cut : 1);
		int good = 0, err = 1, expect;

		memcpy(copy, img->buf, cut);
		while (good < img->nchunks && img->bounds[good + 1] <= cut)
			good++;
		if (cut < 16) {
			expect = -ENODATA;
		} else {
			expect = img->bounds[good] == cut ? 0 : -ENODATA;
		}
		if (read_damaged(name, img, copy, cut, good, &err, cut)) {
			if (err != expect)
				LOOP_FAIL(name, "cut at %zu: expected %d, got %d", cut, expect,
					  err);
			else
				checked++;
		}
		free(copy);
	}
	T_CHECK(name, checked == (int)img->len + 1, "%d of %zu cuts right", checked, img->len + 1);
}

/* Errors a damaged byte may cause, by its place in the chunk header (format.md 3.1). */
static bool flip_error_ok(uint64_t off_in_chunk, int err)
{
	if (off_in_chunk >= 12 && off_in_chunk < 16)	/* raw_len: limit or checksum */
		return err == -EBADMSG || err == -EOVERFLOW;
	if (off_in_chunk >= 16 && off_in_chunk < 20)	/* stored_len: limit, past EOF, checksum */
		return err == -EBADMSG || err == -EOVERFLOW || err == -ENODATA;
	return err == -EBADMSG;	/* magic, type, flags, seq, crc, payload */
}

static void test_flips(const struct capture_image *img, const char *name)
{
	static const uint8_t masks[] = { 0x01, 0x80, 0xff };
	uint8_t *copy = malloc(img->len);
	size_t i, m;
	int checked = 0, total = 0;

	reports = 0;
	for (i = 0; i < img->len; i++) {
		for (m = 0; m < sizeof(masks); m++) {
			int k = chunk_of(img, i), err = 1;
			bool right;

			memcpy(copy, img->buf, img->len);
			copy[i] ^= masks[m];
			total++;
			if (!read_damaged(name, img, copy, img->len, k, &err, i))
				continue;
			if (i < 8)
				right = err == -EINVAL;	/* magic: not a capture */
			else if (i < 16)
				right = err == -EBADMSG;	/* version or header crc */
			else
				right = flip_error_ok(i - img->bounds[k], err);
			if (!right)
				LOOP_FAIL(name, "byte %zu ^ 0x%02x (chunk %d): error %d", i,
					  masks[m], k, err);
			else
				checked++;
		}
	}
	free(copy);
	T_CHECK(name, checked == total, "%d of %d damaged copies right", checked, total);
}

int main(void)
{
	struct cap_record recs[SAMPLE_NRECORDS];
	struct capture_image img;
	char *dir = tmp_dir(), path[512];

	if (!dir) {
		T_FAIL("tmpdir", "%s", strerror(errno));
		T_EXIT();
	}
	snprintf(path, sizeof(path), "%s/d.stk", dir);
	sample_records(recs);
	if (capture_image__make(&img, path, recs, SAMPLE_NRECORDS, 2)) {
		T_FAIL("make capture", "could not write and read back the samples");
		T_EXIT();
	}
	T_EQ_INT("capture has 12 chunks", 12, img.nchunks);
	test_truncate(&img, "cut at every byte: exactly the complete chunks, then ENODATA or end");
	test_flips(&img, "every byte damaged: intact chunks only, then the right error");
	capture_image__free(&img);
	rm_tree(dir);
	T_EXIT();
}
