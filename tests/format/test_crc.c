/* SPDX-License-Identifier: MIT */
/*
 * test_crc: the hand-written CRC32C against published check values: the CRC catalogue's
 * "123456789" and the four 32-byte vectors of RFC 3720 (iSCSI) appendix B.4; chaining.
 */
#include "helpers.h"

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
	T_EXIT();
}
