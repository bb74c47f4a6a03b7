/* SPDX-License-Identifier: MIT */
/*
 * chunk.c: the chunk header (format.md 3.1) and the table of chunk types (format.md 3.2).
 */
#include <errno.h>

#include "internal.h"

/* format.md 3.2: a reader not knowing a mandatory type must stop; an optional one it skips. */
bool cap_chunk_type_mandatory(uint16_t type)
{
	switch (type) {
	case CAP_CHUNK_META:
	case CAP_CHUNK_KSYMS:
	case CAP_CHUNK_PROCS:
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS:	/* 1.1: a reader skipping it would report no stacks at all */
	case CAP_CHUNK_KSYMS_ADD:	/* 2.0: skipping it leaves kernel frames unnamed */
	case CAP_CHUNK_CODES:	/* 3.1: skipping it, interpreter frames would read as addresses */
		return true;
	default:
		return false;
	}
}

bool cap_chunk_type_known(uint16_t type)
{
	return type >= CAP_CHUNK_META && type <= CAP_CHUNK_CODES;
}

/* format.md 3.1 */
void cap_chunk_hdr__pack(const struct cap_chunk_hdr *h, uint8_t out[CAP_CHUNK_HDR_LEN])
{
	memcpy(out, CAP_CHUNK_MAGIC, 4);
	cap_store_u16(out + 4, h->type);
	cap_store_u16(out + 6, h->flags);
	cap_store_u32(out + 8, h->seq);
	cap_store_u32(out + 12, h->raw_len);
	cap_store_u32(out + 16, h->stored_len);
	cap_store_u32(out + 20, h->crc);
}

int cap_chunk_hdr__unpack(const uint8_t in[CAP_CHUNK_HDR_LEN], struct cap_chunk_hdr *h)
{
	if (memcmp(in, CAP_CHUNK_MAGIC, 4))
		return -EBADMSG;
	h->type = cap_load_u16(in + 4);
	h->flags = cap_load_u16(in + 6);
	h->seq = cap_load_u32(in + 8);
	h->raw_len = cap_load_u32(in + 12);
	h->stored_len = cap_load_u32(in + 16);
	h->crc = cap_load_u32(in + 20);
	return 0;
}

/* format.md 3.1: one checksum covers the header (minus its crc field) and the stored payload. */
uint32_t cap_chunk_crc(const uint8_t hdr[CAP_CHUNK_HDR_LEN], const void *payload, size_t len)
{
	uint32_t crc = cap_crc32c(0, hdr, CAP_CHUNK_HDR_CRC_OFF);

	return cap_crc32c(crc, payload, len);
}
