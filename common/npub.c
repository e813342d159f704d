/* npub.c - NIP-19 npub decoding over BIP-173 bech32 (see npub.h). */
#include "npub.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "hex.h"

/* "npub1", 52 data characters (32 bytes in 5-bit groups) and 6 of checksum. */
#define NPUB_LEN 63
#define NPUB_DATA 52

static const char bech32_alphabet[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

/* BIP-173's checksum over the expanded human-readable part and the data. */
static uint32_t bech32_polymod(const uint8_t *values, size_t n)
{
	static const uint32_t gen[5] = { 0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd,
					 0x2a1462b3 };
	uint32_t chk = 1;

	for (size_t i = 0; i < n; i++) {
		uint32_t top = chk >> 25;

		chk = ((chk & 0x1ffffff) << 5) ^ values[i];
		for (int b = 0; b < 5; b++)
			if ((top >> b) & 1)
				chk ^= gen[b];
	}
	return chk;
}

/* The 5-bit values of the data and checksum characters, after the
 * expanded "npub" (high bits, 0, low bits); -1 for a foreign character. */
static int npub_values(const char *text, uint8_t *v)
{
	static const char hrp[] = "npub";
	size_t n = 0;

	for (int i = 0; i < 4; i++)
		v[n++] = (uint8_t)(hrp[i] >> 5);
	v[n++] = 0;
	for (int i = 0; i < 4; i++)
		v[n++] = (uint8_t)(hrp[i] & 31);
	for (int i = 5; i < NPUB_LEN; i++) {
		const char *p = strchr(bech32_alphabet, tolower((unsigned char)text[i]));

		if (!p || !text[i])
			return -1;
		v[n++] = (uint8_t)(p - bech32_alphabet);
	}
	return 0;
}

/* Regroups the 52 5-bit data values into 32 bytes; the 4 bits left over
 * must be zero padding. */
static int npub_regroup(const uint8_t *data, uint8_t out[32])
{
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;

	for (int i = 0; i < NPUB_DATA; i++) {
		acc = (acc << 5) | data[i];
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	return n == 32 && bits == 4 && (acc & 0xf) == 0 ? 0 : -1;
}

static int npub_one_case(const char *text)
{
	int lower = 0, upper = 0;

	for (const char *p = text; *p; p++) {
		lower |= islower((unsigned char)*p);
		upper |= isupper((unsigned char)*p);
	}
	return !(lower && upper);
}

int npub_decode(const char *text, uint8_t out[32])
{
	uint8_t v[9 + NPUB_LEN - 5];

	if (strlen(text) != NPUB_LEN || strncasecmp(text, "npub1", 5) || !npub_one_case(text) ||
	    npub_values(text, v))
		return ERR_INVAL;
	if (bech32_polymod(v, sizeof(v)) != 1)
		return ERR_INVAL;
	return npub_regroup(v + 9, out) ? ERR_INVAL : 0;
}

int npub_to_hex(const char *text, char hex[65])
{
	uint8_t key[32];

	if (hex_decode(text, strlen(text), key, sizeof(key)) && npub_decode(text, key))
		return ERR_INVAL;
	hex_encode(key, sizeof(key), hex);
	return 0;
}
