/* SPDX-License-Identifier: MIT */
/*
 * internal.h: shared by the files of format/ only. Byte-level helpers (little-endian on every
 * host, format.md 1), the chunk header layout (format.md 3.1), growable buffers, the decoder's
 * arena and the record codecs.
 */
#ifndef STK_FORMAT_INTERNAL_H
#define STK_FORMAT_INTERNAL_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stk/capture.h"

/* format.md 2: the file header. */
#define CAP_FILE_MAGIC		"STKCAP\r\n"
#define CAP_FILE_MAGIC_LEN	8u
#define CAP_FILE_HDR_LEN	16u
#define CAP_FILE_HDR_CRC_OFF	12u

/* format.md 3.1: the chunk header. */
#define CAP_CHUNK_MAGIC		"CHNK"
#define CAP_CHUNK_HDR_LEN	24u
#define CAP_CHUNK_HDR_CRC_OFF	20u

struct cap_chunk_hdr {
	uint16_t type;
	uint16_t flags;
	uint32_t seq;
	uint32_t raw_len;
	uint32_t stored_len;
	uint32_t crc;
};

/* ---- little-endian loads and stores (unaligned-safe) ---- */

static inline void cap_store_u16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void cap_store_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void cap_store_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t cap_load_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t cap_load_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t cap_load_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* format.md 1.5: the longest varint, 64 bits in groups of 7. */
#define CAP_VARINT_MAX 10u

/* ---- chunk.c ---- */

/* Whether format.md 3.2 marks chunks of this type mandatory; false for unknown types. */
bool cap_chunk_type_mandatory(uint16_t type);
/* Whether this library can decode the type (format.md 4). */
bool cap_chunk_type_known(uint16_t type);

void cap_chunk_hdr__pack(const struct cap_chunk_hdr *h, uint8_t out[CAP_CHUNK_HDR_LEN]);
/* Returns 0 or -EBADMSG when the magic is wrong. crc is the stored value, not checked. */
int cap_chunk_hdr__unpack(const uint8_t in[CAP_CHUNK_HDR_LEN], struct cap_chunk_hdr *h);
/* CRC of a chunk: the 20 header bytes before the crc field, then the stored payload. */
uint32_t cap_chunk_crc(const uint8_t hdr[CAP_CHUNK_HDR_LEN], const void *payload, size_t len);

/* ---- growable byte buffer (writer side) ---- */

struct cap_buf {
	uint8_t *data;
	size_t len, cap;
	int err;	/* sticky: first -ENOMEM or -EOVERFLOW; later appends do nothing */
};

int cap_buf__reserve(struct cap_buf *b, size_t more);
void cap_buf__put(struct cap_buf *b, const void *p, size_t n);
void cap_buf__put_u32(struct cap_buf *b, uint32_t v);
void cap_buf__put_u64(struct cap_buf *b, uint64_t v);
/* format.md 4: u32 length + bytes, no NUL. NULL is written as the empty string. */
void cap_buf__put_str(struct cap_buf *b, const char *s);
/* format.md 1.5 (3.0): unsigned LEB128, 1 to CAP_VARINT_MAX bytes. */
void cap_buf__put_varint(struct cap_buf *b, uint64_t v);
void cap_buf__free(struct cap_buf *b);

/* ---- stacks.c: the writer's set of the stacks a file holds (format.md 4.4, 4.0) ---- */

struct cap_stack_set;
struct cap_stack_set *cap_stack_set__new(void);
void cap_stack_set__free(struct cap_stack_set *s);
/* Stacks held: the highest reference. */
uint32_t cap_stack_set__count(const struct cap_stack_set *s);
/*
 * The file's reference (from 1) of a stack with st's content, added if the file does not hold
 * one (its reference is then count + 1); -ENOMEM or -EOVERFLOW (2^32 - 1 stacks).
 */
int64_t cap_stack_set__ref(struct cap_stack_set *s, const struct cap_stack *st);
/* The stack of reference ref (at most count): ips lent until the set changes. */
void cap_stack_set__get(const struct cap_stack_set *s, uint32_t ref, struct cap_stack *out);
/* Forget the stacks added after the first n (their chunk was not written). */
void cap_stack_set__truncate(struct cap_stack_set *s, uint32_t n);

/* ---- encode.c ---- */

/*
 * Append the payload of rec to b (format.md 4). An INTERVAL or EVENTS record's stacks go through
 * held[0] (kernel) and held[1] (user), the file's stacks: only new ones are written, and added
 * (the caller forgets them with cap_stack_set__truncate() if the chunk is not written). Returns
 * 0, -EINVAL, -EOVERFLOW or -ENOMEM (held then unchanged).
 */
int cap_record_encode(const struct cap_record *rec, struct cap_stack_set *const held[2],
		      struct cap_buf *b);

/* ---- arena.c: the decoder's allocations, freed at once ---- */

struct cap_arena;

/*
 * Blocks are taken from budget (NULL: no limit); the first small-request block holds
 * first_block bytes (256 to 64 KiB), later ones 64 KiB. NULL + errno: EFBIG (over budget),
 * ENOMEM.
 */
struct cap_arena *cap_arena__new(struct cap_budget *budget, size_t first_block);
/* Zeroed memory, 8-byte aligned; NULL + errno: EFBIG (over budget), ENOMEM. */
void *cap_arena__alloc(struct cap_arena *a, size_t n);
void cap_arena__free(struct cap_arena *a);

#endif /* STK_FORMAT_INTERNAL_H */
