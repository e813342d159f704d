/* wsframe.c - websocket frame headers and sizes (see wsframe.h). */
#include "wsframe.h"

size_t wsframe_text_header(unsigned char h[WSFRAME_HEADER_MAX], size_t payload_len)
{
	return wsframe_header(h, payload_len, false);
}

size_t wsframe_header(unsigned char h[WSFRAME_HEADER_MAX], size_t payload_len, bool compressed)
{
	uint64_t len = payload_len;

	h[0] = compressed ? 0xc1 : 0x81; /* FIN, RSV1 if compressed, opcode 1 (text) */
	if (len < 126) {
		h[1] = (unsigned char)len;
		return 2;
	}
	if (len <= 0xffff) {
		h[1] = 126;
		h[2] = (unsigned char)(len >> 8);
		h[3] = (unsigned char)len;
		return 4;
	}
	h[1] = 127;
	for (int i = 0; i < 8; i++)
		h[2 + i] = (unsigned char)(len >> (56 - 8 * i));
	return 10;
}

bool wsframe_over(uint64_t have, uint64_t rest, uint64_t max)
{
	return have > max || rest > max - have;
}
