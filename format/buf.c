/* SPDX-License-Identifier: MIT */
/*
 * buf.c: the writer's growable byte buffer. Errors are sticky so the encoder can append a whole
 * record and check once at the end.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

int cap_buf__reserve(struct cap_buf *b, size_t more)
{
	size_t want, cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (more <= b->cap - b->len)
		return 0;
	/*
	 * A payload never exceeds CAP_MAX_CHUNK_RAW, nor its lz4 frame twice that: stop growing
	 * there, long before size_t could overflow.
	 */
	if (more > 2 * (size_t)CAP_MAX_CHUNK_RAW || b->len > 2 * (size_t)CAP_MAX_CHUNK_RAW) {
		b->err = -EOVERFLOW;
		return b->err;
	}
	want = b->len + more;
	cap = b->cap ? b->cap : 4096;
	while (cap < want)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->err = -ENOMEM;
		return b->err;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void cap_buf__put(struct cap_buf *b, const void *p, size_t n)
{
	if (cap_buf__reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

void cap_buf__put_u32(struct cap_buf *b, uint32_t v)
{
	uint8_t le[4];

	cap_store_u32(le, v);
	cap_buf__put(b, le, sizeof(le));
}

void cap_buf__put_u64(struct cap_buf *b, uint64_t v)
{
	uint8_t le[8];

	cap_store_u64(le, v);
	cap_buf__put(b, le, sizeof(le));
}

/* format.md 4 (strings) */
void cap_buf__put_str(struct cap_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > CAP_MAX_CHUNK_RAW) {
		if (!b->err)
			b->err = -EOVERFLOW;
		return;
	}
	cap_buf__put_u32(b, (uint32_t)n);
	cap_buf__put(b, s, n);
}

/* format.md 1.5: seven bits a byte, low group first, the high bit on every byte but the last. */
void cap_buf__put_varint(struct cap_buf *b, uint64_t v)
{
	uint8_t out[CAP_VARINT_MAX];
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	cap_buf__put(b, out, n);
}

void cap_buf__free(struct cap_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}
