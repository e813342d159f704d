/*
 * test_hex.c - checks common/hex.c: fixed vectors, every possible digit
 * pair against a table-driven reference (only 0-9 and a-f are digits;
 * uppercase is refused), length rules, and random round trips against
 * snprintf("%02x").
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../common/hex.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

static struct splitmix rng;

/* Reference digit value: position in the lowercase alphabet, or -1. */
static int ref_digit(int c)
{
	static const char alphabet[] = "0123456789abcdef";
	const char *p = c ? memchr(alphabet, c, 16) : NULL;

	return p ? (int)(p - alphabet) : -1;
}

START_TEST(test_vectors)
{
	const uint8_t bytes[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xcd, 0xef, 0xff };
	uint8_t back[sizeof(bytes)];
	char text[2 * sizeof(bytes) + 1];

	hex_encode(bytes, sizeof(bytes), text);
	ck_assert_str_eq(text, "00017f80abcdefff");
	ck_assert_int_eq(hex_decode(text, 16, back, sizeof(back)), 0);
	ck_assert_int_eq(memcmp(back, bytes, sizeof(bytes)), 0);
}
END_TEST

START_TEST(test_empty)
{
	char text[1] = { 'x' };
	uint8_t out[1] = { 0x55 };

	hex_encode(out, 0, text);
	ck_assert_str_eq(text, "");
	ck_assert_int_eq(hex_decode("", 0, out, 0), 0);
	ck_assert_uint_eq(out[0], 0x55);
}
END_TEST

/* All 65536 two-character inputs, decoded as one byte. */
START_TEST(test_every_pair)
{
	unsigned wrong = 0;

	for (int hi = 0; hi < 256; hi++) {
		for (int lo = 0; lo < 256; lo++) {
			char in[2] = { (char)hi, (char)lo };
			uint8_t out = 0;
			int rc = hex_decode(in, 2, &out, 1);
			int want_ok = ref_digit(hi) >= 0 && ref_digit(lo) >= 0;

			if (want_ok)
				wrong += rc != 0 || out != (ref_digit(hi) << 4 | ref_digit(lo));
			else
				wrong += rc != ERR_INVAL;
		}
	}
	ck_assert_uint_eq(wrong, 0);
}
END_TEST

START_TEST(test_uppercase_refused)
{
	uint8_t out[4];

	ck_assert_int_eq(hex_decode("ABCDEF01", 8, out, 4), ERR_INVAL);
	ck_assert_int_eq(hex_decode("abcdeF01", 8, out, 4), ERR_INVAL);
	ck_assert_int_eq(hex_decode("abcdef01", 8, out, 4), 0);
}
END_TEST

/* The text must be exactly twice the output length. */
START_TEST(test_lengths)
{
	uint8_t out[33];
	char text[67];

	memset(text, 'a', sizeof(text));
	ck_assert_int_eq(hex_decode(text, 64, out, 32), 0);
	ck_assert_int_eq(hex_decode(text, 63, out, 32), ERR_INVAL);
	ck_assert_int_eq(hex_decode(text, 65, out, 32), ERR_INVAL);
	ck_assert_int_eq(hex_decode(text, 66, out, 32), ERR_INVAL);
	ck_assert_int_eq(hex_decode(text, 62, out, 32), ERR_INVAL);
	ck_assert_int_eq(hex_decode(text, 1, out, 0), ERR_INVAL);
	/* A bad digit in the very last place is found. */
	text[63] = 'g';
	ck_assert_int_eq(hex_decode(text, 64, out, 32), ERR_INVAL);
	text[63] = '\0';
	ck_assert_int_eq(hex_decode(text, 64, out, 32), ERR_INVAL);
}
END_TEST

START_TEST(test_random_round_trip)
{
	uint8_t in[64], out[64];
	char text[129], want[129];
	int bad = 0;

	rng.state = 4242;
	for (int round = 0; round < 2000; round++) {
		size_t len = splitmix_next(&rng) % 65;

		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)splitmix_next(&rng);
		for (size_t i = 0; i < len; i++)
			snprintf(want + 2 * i, 3, "%02x", in[i]);
		want[2 * len] = '\0';
		hex_encode(in, len, text);
		bad |= strcmp(text, want) != 0;
		bad |= hex_decode(text, 2 * len, out, len) != 0;
		bad |= memcmp(in, out, len) != 0;
	}
	ck_assert_int_eq(bad, 0);
}
END_TEST

static Suite *hex_suite(void)
{
	Suite *s = suite_create("hex");
	TCase *tc = tcase_create("hex");

	tcase_add_test(tc, test_vectors);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_every_pair);
	tcase_add_test(tc, test_uppercase_refused);
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_random_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(hex_suite());
}
