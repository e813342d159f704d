/* hex.c - lowercase hex encoding (see hex.h). */
#include "hex.h"

#include "err.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int hex_decode(const char *hex, size_t hex_len, uint8_t *out, size_t out_len)
{
	if (hex_len != 2 * out_len)
		return ERR_INVAL;
	for (size_t i = 0; i < out_len; i++) {
		int hi = hex_digit(hex[2 * i]);
		int lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return ERR_INVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}
