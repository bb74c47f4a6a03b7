/* SPDX-License-Identifier: MIT */
/*
 * craft.h: build capture bytes by hand (format.md 2 and 3.1), independently of format/'s writer,
 * so tests can make what the writer never would: other versions, wrong lengths, bad sequence
 * numbers, payloads that are not lz4, chunks with valid checksums around malformed records.
 */
#ifndef STK_TESTS_FORMAT_CRAFT_H
#define STK_TESTS_FORMAT_CRAFT_H

#include <lz4frame.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stk/capture.h"

struct craft {
	uint8_t buf[1 << 16];
	size_t len;
	uint32_t seq;
	size_t last;	/* offset of the chunk appended last */
};

static inline void craft_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void craft_header(struct craft *c, uint16_t major, uint16_t minor)
{
	memcpy(c->buf, "STKCAP\r\n", 8);
	craft_le(c->buf + 8, major, 2);
	craft_le(c->buf + 10, minor, 2);
	craft_le(c->buf + 12, cap_crc32c(0, c->buf, 12), 4);
	c->len = 16;
	c->seq = 0;
}

/* Append a chunk whose stored bytes are given as is; raw_len as given; checksum correct. */
static inline void craft_chunk_stored(struct craft *c, uint16_t type, uint16_t flags, uint32_t seq,
				      uint32_t raw_len, const void *stored, uint32_t stored_len)
{
	uint8_t *h = c->buf + c->len;

	c->last = c->len;
	memcpy(h, "CHNK", 4);
	craft_le(h + 4, type, 2);
	craft_le(h + 6, flags, 2);
	craft_le(h + 8, seq, 4);
	craft_le(h + 12, raw_len, 4);
	craft_le(h + 16, stored_len, 4);
	memcpy(h + 24, stored, stored_len);
	craft_le(h + 20, cap_crc32c(cap_crc32c(0, h, 20), h + 24, stored_len), 4);
	c->len += 24 + stored_len;
	c->seq = seq + 1;
}

/* Append a well-formed chunk carrying payload (compressed as the writer does). */
static inline void craft_chunk(struct craft *c, uint16_t type, uint16_t flags, const void *payload,
			       size_t len)
{
	LZ4F_preferences_t prefs = { .frameInfo.contentSize = len };
	uint8_t frame[8192];
	size_t n = LZ4F_compressFrame(frame, sizeof(frame), payload, len, &prefs);

	craft_chunk_stored(c, type, flags, c->seq, (uint32_t)len, frame, (uint32_t)n);
}

/* Payload builder: little-endian integers and strings (format.md 1). */
struct craft_payload {
	uint8_t buf[1 << 15];
	size_t len;
};

static inline void pl_reset(struct craft_payload *p)
{
	p->len = 0;
}

static inline struct craft_payload *pl_u32(struct craft_payload *p, uint32_t v)
{
	craft_le(p->buf + p->len, v, 4);
	p->len += 4;
	return p;
}

static inline struct craft_payload *pl_u64(struct craft_payload *p, uint64_t v)
{
	craft_le(p->buf + p->len, v, 8);
	p->len += 8;
	return p;
}

static inline struct craft_payload *pl_bytes(struct craft_payload *p, const void *b, size_t n)
{
	memcpy(p->buf + p->len, b, n);
	p->len += n;
	return p;
}

static inline struct craft_payload *pl_str(struct craft_payload *p, const char *s)
{
	pl_u32(p, (uint32_t)strlen(s));
	return pl_bytes(p, s, strlen(s));
}

#endif /* STK_TESTS_FORMAT_CRAFT_H */
