/* SPDX-License-Identifier: MIT */
/*
 * test_versions: the compatibility rules of format.md 5 (newer major refused, older majors and
 * newer minors read, unknown optional chunks skipped, unknown mandatory ones refused) and every
 * chunk-level error of format.md 3.3 on hand-made bytes with valid checksums.
 */
#include "craft.h"
#include "helpers.h"

static const uint8_t end_payload[20] = { 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3 };

static struct craft c;

/* Open c, read chunks; returns the first non-1 result, with the types read in types[]. */
static int walk(int *n, uint16_t *types, uint32_t *indexes, struct cap_reader **keep)
{
	struct cap_reader *r = cap_reader__open_mem(c.buf, c.len);
	struct cap_chunk ch;
	int ret;

	*n = 0;
	if (!r)
		return -errno;
	while ((ret = cap_reader__next(r, &ch)) == 1) {
		types[*n] = ch.type;
		indexes[*n] = ch.index;
		(*n)++;
	}
	if (keep)
		*keep = r;
	else
		cap_reader__close(r);
	return ret;
}

static void test_major_minor(void)
{
	struct cap_reader *r;
	uint16_t types[8], major = 0, minor = 0;
	uint32_t idx[8];
	int n, ret;
	char *dir, path[512], name[32];
	FILE *f;

	craft_header(&c, CAP_MAJOR + 1, 0);
	craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
	errno = 0;
	r = cap_reader__open_mem(c.buf, c.len);
	T_CHECK("major 5 refused: ENOTSUP", CAP_MAJOR == 4 && !r && errno == ENOTSUP, "errno %d",
		errno);
	dir = tmp_dir();
	snprintf(path, sizeof(path), "%s/v5.stk", dir);
	f = fopen(path, "wb");
	fwrite(c.buf, 1, c.len, f);
	fclose(f);
	errno = 0;
	r = cap_reader__open(path);
	T_CHECK("major 5 file refused: ENOTSUP", !r && errno == ENOTSUP, "errno %d", errno);
	rm_tree(dir);

	craft_header(&c, 0, 9);
	errno = 0;
	r = cap_reader__open_mem(c.buf, c.len);
	T_CHECK("major 0 refused: EBADMSG", !r && errno == EBADMSG, "errno %d", errno);

	/* 4.0 reads every 1.x, 2.x and 3.x file (format.md 5), minors it never saw included. */
	for (minor = 0; minor <= 8; minor++) {
		craft_header(&c, 1 + minor / 3, minor % 3);
		craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
		ret = walk(&n, types, idx, NULL);
		snprintf(name, sizeof(name), "version %u.%u read", 1 + minor / 3, minor % 3);
		T_CHECK(name, ret == 0 && n == 1 && types[0] == CAP_CHUNK_END, "ret %d, %d chunks",
			ret, n);
	}

	craft_header(&c, CAP_MAJOR, CAP_MINOR + 7);
	craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
	ret = walk(&n, types, idx, &r);
	T_CHECK("newer minor read", ret == 0 && n == 1 && types[0] == CAP_CHUNK_END,
		"ret %d, %d chunks", ret, n);
	cap_reader__version(r, &major, &minor);
	T_CHECK("newer minor version reported", major == CAP_MAJOR && minor == CAP_MINOR + 7,
		"%u.%u", major, minor);
	cap_reader__close(r);
}

static void test_unknown_chunks(void)
{
	struct cap_reader *r;
	struct cap_chunk ch;
	struct cap_record *rec;
	uint16_t types[8];
	uint32_t idx[8];
	size_t mandatory_off;
	int n, ret;

	craft_header(&c, CAP_MAJOR, CAP_MINOR);
	craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
	craft_chunk(&c, 200, 0x0, "future", 6);
	craft_chunk(&c, 201, 0xfffe, "future", 6);	/* unknown flag bits, still optional */
	craft_chunk(&c, CAP_CHUNK_END, 0x8000, end_payload, sizeof(end_payload));
	ret = walk(&n, types, idx, NULL);
	T_CHECK("unknown optional chunks skipped",
		ret == 0 && n == 2 && idx[0] == 0 && idx[1] == 3 && types[1] == CAP_CHUNK_END,
		"ret %d, %d chunks, indexes %u %u", ret, n, idx[0], idx[1]);

	craft_header(&c, CAP_MAJOR, CAP_MINOR);
	craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
	craft_chunk(&c, 202, CAP_CHUNK_F_MANDATORY, "future", 6);
	mandatory_off = c.last;
	craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
	ret = walk(&n, types, idx, &r);
	T_CHECK("unknown mandatory chunk: ENOTSUP after chunk 0", ret == -ENOTSUP && n == 1,
		"ret %d, %d chunks", ret, n);
	T_CHECK("unknown mandatory chunk named", cap_reader__chunk_index(r) == 1 &&
		cap_reader__offset(r) == mandatory_off,
		"chunk %u at %" PRIu64, cap_reader__chunk_index(r), cap_reader__offset(r));
	T_EQ_INT("unknown mandatory is sticky", -ENOTSUP, cap_reader__next(r, &ch));
	cap_reader__close(r);

	ch = (struct cap_chunk){ .type = 202, .len = 6, .data = "future" };
	T_EQ_INT("decode of unknown type: ENOTSUP", -ENOTSUP, cap_record__decode(&ch, &rec));
}

/* One crafted chunk after a good one (at offset second); expect err naming chunk 1. */
static void expect_chunk_error(const char *name, int want, size_t second)
{
	struct cap_reader *r = cap_reader__open_mem(c.buf, c.len);
	struct cap_chunk ch;
	int ret;

	if (!r) {
		T_FAIL(name, "open: %s", strerror(errno));
		return;
	}
	ret = cap_reader__next(r, &ch);
	if (ret != 1) {
		T_FAIL(name, "first chunk: %d", ret);
		cap_reader__close(r);
		return;
	}
	ret = cap_reader__next(r, &ch);
	T_CHECK(name, ret == want && cap_reader__chunk_index(r) == 1 &&
		cap_reader__offset(r) == second,
		"expected %d at chunk 1, got %d at chunk %u offset %" PRIu64, want, ret,
		cap_reader__chunk_index(r), cap_reader__offset(r));
	cap_reader__close(r);
}

/* A capture with one good chunk; returns where the next chunk starts. */
static size_t start(void)
{
	craft_header(&c, CAP_MAJOR, CAP_MINOR);
	craft_chunk(&c, CAP_CHUNK_END, 0, end_payload, sizeof(end_payload));
	return c.len;
}

static void test_chunk_errors(void)
{
	LZ4F_preferences_t prefs = { .frameInfo.contentSize = sizeof(end_payload) };
	uint8_t frame[256], two[512], junk[64];
	size_t n, second;

	n = LZ4F_compressFrame(frame, sizeof(frame), end_payload, sizeof(end_payload), &prefs);
	memset(junk, 0x5a, sizeof(junk));

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, CAP_MAX_CHUNK_RAW + 1, frame, (uint32_t)n);
	expect_chunk_error("raw_len over the limit: EOVERFLOW", -EOVERFLOW, second);

	second = start();
	craft_chunk_stored(&c, 200, 0, 1, 0, junk, sizeof(junk));
	expect_chunk_error("stored_len over the lz4 bound: EOVERFLOW", -EOVERFLOW, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 2, sizeof(end_payload), frame, (uint32_t)n);
	expect_chunk_error("sequence number skipped: EBADMSG", -EBADMSG, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 0, sizeof(end_payload), frame, (uint32_t)n);
	expect_chunk_error("sequence number repeated: EBADMSG", -EBADMSG, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload), frame, (uint32_t)n);
	memcpy(c.buf + c.len - n - 24, "CHNL", 4);
	expect_chunk_error("bad chunk magic: EBADMSG", -EBADMSG, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload), junk, 30);
	expect_chunk_error("payload not lz4 (valid crc): EBADMSG", -EBADMSG, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload) + 1, frame, (uint32_t)n);
	expect_chunk_error("raw_len one more than the frame: EBADMSG", -EBADMSG, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload) - 1, frame, (uint32_t)n);
	expect_chunk_error("raw_len one less than the frame: EBADMSG", -EBADMSG, second);

	/* Without a content size in the frame, only the length check catches a short raw_len. */
	prefs.frameInfo.contentSize = 0;
	n = LZ4F_compressFrame(two, sizeof(two), end_payload, sizeof(end_payload), &prefs);
	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload) - 1, two, (uint32_t)n);
	expect_chunk_error("frame longer than raw_len: EBADMSG", -EBADMSG, second);
	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload) + 1, two, (uint32_t)n);
	expect_chunk_error("frame shorter than raw_len: EBADMSG", -EBADMSG, second);

	n = LZ4F_compressFrame(frame, sizeof(frame), end_payload, sizeof(end_payload), NULL);
	memcpy(two, frame, n);
	memset(two + n, 0, 2);
	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload), two, (uint32_t)(n + 2));
	expect_chunk_error("bytes after the lz4 frame: EBADMSG", -EBADMSG, second);

	n = LZ4F_compressFrame(frame, sizeof(frame), end_payload, sizeof(end_payload), NULL);
	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload), frame, (uint32_t)n - 4);
	expect_chunk_error("lz4 frame cut short (valid crc): EBADMSG", -EBADMSG, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload), frame, (uint32_t)n);
	c.len -= 1;
	expect_chunk_error("payload cut by end of file: ENODATA", -ENODATA, second);

	second = start();
	memcpy(c.buf + c.len, "CHNK\6\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 23);
	c.len += 23;
	expect_chunk_error("chunk header cut by end of file: ENODATA", -ENODATA, second);

	second = start();
	craft_chunk_stored(&c, CAP_CHUNK_END, 0, 1, sizeof(end_payload), frame, (uint32_t)n);
	c.buf[c.len - 1] ^= 1;
	expect_chunk_error("checksum mismatch: EBADMSG", -EBADMSG, second);
}

int main(void)
{
	test_major_minor();
	test_unknown_chunks();
	test_chunk_errors();
	T_EXIT();
}
