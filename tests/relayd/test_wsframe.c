/*
 * test_wsframe.c - checks relayd/wsframe.c against a decoder written here
 * from RFC 6455 5.2: at every length boundary (125/126, 65535/65536) and on
 * random lengths, the header decodes to FIN, text, unmasked and the length.
 * The size test is checked at its boundary and with 64-bit lengths that
 * would wrap a sum.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../relayd/wsframe.h"
#include "../support/suite.h"

struct decoded {
	int fin, opcode, masked;
	uint64_t len;
	size_t header_len;
};

static struct decoded decode(const unsigned char *h)
{
	struct decoded d = { h[0] >> 7, h[0] & 0x0f, h[1] >> 7, h[1] & 0x7f, 2 };

	if (d.len == 126) {
		d.len = (uint64_t)h[2] << 8 | h[3];
		d.header_len = 4;
	} else if (d.len == 127) {
		d.len = 0;
		for (int i = 0; i < 8; i++)
			d.len = d.len << 8 | h[2 + i];
		d.header_len = 10;
	}
	return d;
}

/* Whether the header for len is want_header bytes and decodes right.
 * Plain comparisons, not ck_assert: check marks each assertion through a
 * pipe, and random_lengths makes a million of them. */
static bool length_ok(size_t len, size_t want_header)
{
	unsigned char h[WSFRAME_HEADER_MAX + 1];
	struct decoded d;

	h[WSFRAME_HEADER_MAX] = 0xee; /* must stay untouched */
	if (wsframe_text_header(h, len) != want_header)
		return false;
	d = decode(h);
	/* RFC 6455: the minimal length encoding must be used. */
	if (want_header == 4 && d.len < 126)
		return false;
	if (want_header == 10 && d.len <= 0xffff)
		return false;
	return d.fin == 1 && d.opcode == 1 && d.masked == 0 && d.len == len &&
	       d.header_len == want_header && h[WSFRAME_HEADER_MAX] == 0xee;
}

static void check_length(size_t len, size_t want_header)
{
	ck_assert_msg(length_ok(len, want_header), "length %zu: not a %zu-byte header", len,
		      want_header);
}

START_TEST(boundaries)
{
	check_length(0, 2);
	check_length(1, 2);
	check_length(125, 2);
	check_length(126, 4);
	check_length(127, 4);
	check_length(65535, 4);
	check_length(65536, 10);
	check_length((size_t)1 << 32, 10);
	check_length(((size_t)1 << 32) + 0x0102, 10);
}
END_TEST

START_TEST(random_lengths)
{
	srand(7);
	for (int i = 0; i < 100000; i++) {
		size_t len = (size_t)rand() % 300000;

		check_length(len, len < 126 ? 2 : len <= 0xffff ? 4 : 10);
	}
}
END_TEST

START_TEST(over_at_the_limit)
{
	ck_assert(!wsframe_over(0, 16384, 16384));
	ck_assert(wsframe_over(0, 16385, 16384));
	ck_assert(!wsframe_over(10000, 6384, 16384));
	ck_assert(wsframe_over(10000, 6385, 16384));
	ck_assert(!wsframe_over(16384, 0, 16384));
	ck_assert(wsframe_over(16385, 0, 16384));
	ck_assert(!wsframe_over(0, 0, 16384));
}
END_TEST

/* A 64-bit length (2^62, the largest 2^63 - 1) would wrap have + rest. */
START_TEST(over_with_huge_lengths)
{
	ck_assert(wsframe_over(0, (uint64_t)1 << 62, 16384));
	ck_assert(wsframe_over(100, INT64_MAX, 16384));
	ck_assert(wsframe_over(1, UINT64_MAX, 16384));
	ck_assert(wsframe_over(UINT64_MAX, 1, 16384));
	ck_assert(wsframe_over(16384, UINT64_MAX - 16383, 16384));
}
END_TEST

/* RFC 7692 6: a compressed message's frame has RSV1 set, nothing else. */
START_TEST(compressed_sets_rsv1)
{
	unsigned char h[WSFRAME_HEADER_MAX], plain[WSFRAME_HEADER_MAX];

	ck_assert_uint_eq(wsframe_header(h, 300, true), 4);
	ck_assert_uint_eq(wsframe_header(plain, 300, false), 4);
	ck_assert_uint_eq(h[0], 0xc1);
	ck_assert_uint_eq(plain[0], 0x81);
	ck_assert(h[1] == plain[1] && h[2] == plain[2] && h[3] == plain[3]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wsframe");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, boundaries);
	tcase_add_test(tc, random_lengths);
	tcase_add_test(tc, over_at_the_limit);
	tcase_add_test(tc, over_with_huge_lengths);
	tcase_add_test(tc, compressed_sets_rsv1);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
