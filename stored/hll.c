/* hll.c - NIP-45 HyperLogLog registers (see hll.h). */
#include "hll.h"

static int hll_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int hll_offset(const struct filter *f)
{
	const struct filter_tag *t;
	int digit;

	if (f->ntags != 1 || f->tags[0].nvalues != 1 || f->tags[0].lens[0] != 64)
		return -1;
	t = &f->tags[0];
	for (int i = 0; i < 64; i++)
		if (hll_hex_digit(t->values[0][i]) < 0)
			return -1;
	digit = hll_hex_digit(t->values[0][32]);
	return digit + 8;
}

void hll_add(uint8_t registers[HLL_REGISTERS], int offset, const uint8_t pubkey[32])
{
	uint8_t index = pubkey[offset];
	uint8_t rank = 1;

	for (int i = offset + 1; i < 32; i++) {
		if (pubkey[i]) {
			rank += (uint8_t)__builtin_clz((unsigned)pubkey[i] << 24);
			break;
		}
		rank += 8;
	}
	if (rank > registers[index])
		registers[index] = rank;
}
