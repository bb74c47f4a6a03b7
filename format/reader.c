/* SPDX-License-Identifier: MIT */
/*
 * reader.c: capture reader (format.md 5). Walks chunk headers over an mmap of the file (or a
 * caller's buffer), checks each checksum before trusting anything but the lengths, and
 * decompresses into one buffer it reuses. Errors are sticky: a damaged chunk ends the walk and
 * the reader keeps naming it.
 */
#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

struct cap_reader {
	const uint8_t *base;
	size_t len;
	bool mapped;		/* base is our mmap of len bytes */
	uint16_t major, minor;
	uint64_t pos;		/* offset of the next chunk header */
	uint32_t next_seq;	/* number the next chunk must carry */
	uint32_t index;		/* chunk last returned or failed */
	uint64_t offset;
	int err;		/* sticky */
	LZ4F_dctx *dctx;
	uint8_t *buf;		/* decompressed payload lent to the caller */
	size_t buf_cap;
	struct cap_budget *budget;	/* buf_cap bytes are taken from it */
};

/* format.md 2: magic, then the header checksum, then the version (the layout is frozen). */
static int check_file_header(struct cap_reader *r)
{
	const uint8_t *h = r->base;

	if (r->len < CAP_FILE_HDR_LEN)
		return -ENODATA;
	if (memcmp(h, CAP_FILE_MAGIC, CAP_FILE_MAGIC_LEN))
		return -EINVAL;
	if (cap_load_u32(h + CAP_FILE_HDR_CRC_OFF) != cap_crc32c(0, h, CAP_FILE_HDR_CRC_OFF))
		return -EBADMSG;
	r->major = cap_load_u16(h + 8);
	r->minor = cap_load_u16(h + 10);
	if (r->major > CAP_MAJOR)
		return -ENOTSUP;
	if (r->major < 1)
		return -EBADMSG;
	return 0;
}

static struct cap_reader *reader_new(const void *buf, size_t len, bool mapped)
{
	struct cap_reader *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->base = buf;
	r->len = len;
	r->mapped = mapped;
	r->pos = CAP_FILE_HDR_LEN;
	r->offset = CAP_FILE_HDR_LEN;
	err = check_file_header(r);
	if (!err && LZ4F_isError(LZ4F_createDecompressionContext(&r->dctx, LZ4F_VERSION)))
		err = -ENOMEM;
	if (err) {
		/* The caller still owns an mmap when we fail: it unmaps. */
		r->mapped = false;
		cap_reader__close(r);
		errno = -err;
		return NULL;
	}
	return r;
}

struct cap_reader *cap_reader__open_mem(const void *buf, size_t len)
{
	if (!buf && len) {
		errno = EINVAL;
		return NULL;
	}
	return reader_new(buf, len, false);
}

struct cap_reader *cap_reader__open(const char *path)
{
	struct cap_reader *r = NULL;
	void *map = MAP_FAILED;
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		err = errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = EISDIR;
		goto out;
	}
	/* mmap of 0 bytes fails with EINVAL; an empty file is simply too short. */
	if (st.st_size < (off_t)CAP_FILE_HDR_LEN) {
		err = ENODATA;
		goto out;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		err = EFBIG;
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto out;
	}
	r = reader_new(map, (size_t)st.st_size, true);
	if (!r)
		err = errno;
out:
	close(fd);
	if (err) {
		if (map != MAP_FAILED)
			munmap(map, (size_t)st.st_size);
		errno = err;
		return NULL;
	}
	return r;
}

static int reserve_buf(struct cap_reader *r, size_t len)
{
	uint8_t *p;

	if (len <= r->buf_cap && r->buf)
		return 0;
	/* Never 0 bytes: LZ4F_decompress wants a real destination even for an empty frame. */
	len = len ? len : 1;
	if (cap_budget__take(r->budget, len - r->buf_cap))
		return -EFBIG;
	p = realloc(r->buf, len);
	if (!p) {
		cap_budget__give(r->budget, len - r->buf_cap);
		return -ENOMEM;
	}
	r->buf = p;
	r->buf_cap = len;
	return 0;
}

/*
 * format.md 3.1: the payload is exactly one lz4 frame that decodes to exactly raw_len bytes;
 * anything else (short, long, trailing bytes, lz4 error) is malformed.
 */
static int decompress(struct cap_reader *r, const uint8_t *src, size_t stored, size_t raw_len)
{
	size_t in_done = 0, out_done = 0, in, out, ret = 1;
	int err;

	/*
	 * An lz4 sequence turns at most one input byte into 255 output bytes (a match-length
	 * extension byte), so a frame cannot decode to more than 255 times its size. Checking it
	 * first keeps a tiny hostile chunk from making us allocate CAP_MAX_CHUNK_RAW bytes.
	 */
	if (raw_len / 255 > stored)
		return -EBADMSG;
	err = reserve_buf(r, raw_len);
	if (err)
		return err;
	LZ4F_resetDecompressionContext(r->dctx);
	while (ret != 0) {
		in = stored - in_done;
		out = r->buf_cap - out_done;
		ret = LZ4F_decompress(r->dctx, r->buf + out_done, &out, src + in_done, &in, NULL);
		if (LZ4F_isError(ret))
			return -EBADMSG;
		in_done += in;
		out_done += out;
		if (ret != 0 && !in && !out)
			return -EBADMSG;	/* no progress: truncated frame or full buffer */
	}
	if (in_done != stored || out_done != raw_len)
		return -EBADMSG;
	return 0;
}

/* One chunk at r->pos: header checks, then checksum, then type and payload. */
static int read_chunk(struct cap_reader *r, struct cap_chunk *chunk, bool *skipped)
{
	const uint8_t *hdr = r->base + r->pos;
	size_t left = r->len - r->pos;
	struct cap_chunk_hdr h;
	int err;

	if (left < CAP_CHUNK_HDR_LEN)
		return -ENODATA;
	err = cap_chunk_hdr__unpack(hdr, &h);
	if (err)
		return err;
	if (h.seq != r->next_seq)
		return -EBADMSG;
	if (h.raw_len > CAP_MAX_CHUNK_RAW)
		return -EOVERFLOW;
	if (h.stored_len > LZ4F_compressFrameBound(h.raw_len, NULL))
		return -EOVERFLOW;
	if (h.stored_len > left - CAP_CHUNK_HDR_LEN)
		return -ENODATA;
	if (h.crc != cap_chunk_crc(hdr, hdr + CAP_CHUNK_HDR_LEN, h.stored_len))
		return -EBADMSG;
	/* format.md 3.2: only now, with the type known to be what was written, judge it. */
	*skipped = false;
	if (!cap_chunk_type_known(h.type)) {
		if (h.flags & CAP_CHUNK_F_MANDATORY)
			return -ENOTSUP;
		*skipped = true;
	} else {
		err = decompress(r, hdr + CAP_CHUNK_HDR_LEN, h.stored_len, h.raw_len);
		if (err)
			return err;
	}
	chunk->index = h.seq;
	chunk->offset = r->pos;
	chunk->type = h.type;
	chunk->flags = h.flags;
	chunk->len = h.raw_len;
	chunk->data = r->buf;
	chunk->major = r->major;
	r->pos += CAP_CHUNK_HDR_LEN + h.stored_len;
	r->next_seq++;
	return 0;
}

int cap_reader__next(struct cap_reader *r, struct cap_chunk *chunk)
{
	bool skipped;
	int err;

	if (!r || !chunk)
		return -EINVAL;
	for (;;) {
		if (r->err)
			return r->err;
		if (r->pos == r->len)
			return 0;
		err = read_chunk(r, chunk, &skipped);
		if (err) {
			/* Not advanced: pos and next_seq still name the chunk that failed. */
			r->index = r->next_seq;
			r->offset = r->pos;
			r->err = err;
			return err;
		}
		if (!skipped) {
			r->index = chunk->index;
			r->offset = chunk->offset;
			return 1;
		}
	}
}

uint32_t cap_reader__chunk_index(const struct cap_reader *r)
{
	return r ? r->index : 0;
}

uint64_t cap_reader__offset(const struct cap_reader *r)
{
	return r ? r->offset : 0;
}

void cap_reader__set_budget(struct cap_reader *r, struct cap_budget *b)
{
	if (!r)
		return;
	/* what the buffer holds moves to the new budget */
	cap_budget__give(r->budget, r->buf_cap);
	r->budget = b;
	if (cap_budget__take(b, r->buf_cap)) {
		free(r->buf);
		r->buf = NULL;
		r->buf_cap = 0;
	}
}

void cap_reader__version(const struct cap_reader *r, uint16_t *major, uint16_t *minor)
{
	if (major)
		*major = r ? r->major : 0;
	if (minor)
		*minor = r ? r->minor : 0;
}

void cap_reader__close(struct cap_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->base, r->len);
	if (r->dctx)
		LZ4F_freeDecompressionContext(r->dctx);
	free(r->buf);
	cap_budget__give(r->budget, r->buf_cap);
	free(r);
}
