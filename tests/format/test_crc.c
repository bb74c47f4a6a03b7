/* SPDX-License-Identifier: MIT */
/*
 * test_crc: the hand-written CRC32C against published check values: the CRC catalogue's
 * "123456789" and the four 32-byte vectors of RFC 3720 (iSCSI) appendix B.4; chaining; and a
 * bit-at-a-time reference on every length and alignment up to 64 bytes (the word-wise SSE4.2
 * path and its byte tail).
 */
#include "helpers.h"

static uint32_t crc32c_bitwise(const uint8_t *p, size_t len)
{
	uint32_t crc = ~0u;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return ~crc;
}

int main(void)
{
	uint8_t buf[32];
	int i;

	T_EQ_U64("crc32c(\"123456789\")", 0xE3069283u, cap_crc32c(0, "123456789", 9));
	T_EQ_U64("crc32c(empty)", 0, cap_crc32c(0, "", 0));
	memset(buf, 0, sizeof(buf));
	T_EQ_U64("rfc3720 32 zeros", 0x8A9136AAu, cap_crc32c(0, buf, 32));
	memset(buf, 0xff, sizeof(buf));
	T_EQ_U64("rfc3720 32 x 0xff", 0x62A8AB43u, cap_crc32c(0, buf, 32));
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	T_EQ_U64("rfc3720 incrementing", 0x46DD794Eu, cap_crc32c(0, buf, 32));
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	T_EQ_U64("rfc3720 decrementing", 0x113FDB5Cu, cap_crc32c(0, buf, 32));
	T_EQ_U64("chained equals whole", cap_crc32c(0, "123456789", 9),
		 cap_crc32c(cap_crc32c(0, "1234", 4), "56789", 5));
	{
		uint8_t big[80];
		int bad = 0;

		for (i = 0; i < (int)sizeof(big); i++)
			big[i] = (uint8_t)(i * 37 + 11);
		for (int off = 0; off < 8; off++)
			for (int len = 0; len <= 64; len++)
				bad += cap_crc32c(0, big + off, len) != crc32c_bitwise(big + off, len);
		T_EQ_U64("every length and alignment as the bitwise reference", 0, bad);
	}
	T_EXIT();
}
