/*
 * test_wire.c - checks proto/wire.c: the exact big-endian layout of every
 * writer, round trips at the extremes, and a reader that fails on short
 * input, keeps its first error, and reports trailing bytes.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../proto/wire.h"
#include "../support/suite.h"

static void assert_bytes(const struct buf *b, const uint8_t *want, size_t len)
{
	ck_assert_uint_eq(b->len, len);
	ck_assert(memcmp(b->data, want, len) == 0);
}

START_TEST(test_put_layout)
{
	static const uint8_t want[] = {
		0xab,                                           /* u8 */
		0x01, 0x02,                                     /* u16 */
		0x01, 0x02, 0x03, 0x04,                         /* u32 */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* u64 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, /* i64 -2 */
		0xde, 0xad,                                     /* raw */
		0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c',          /* str */
		0x00, 0x00, 0x00, 0x00,                         /* empty str */
	};
	struct buf b = BUF_INIT;

	ck_assert_int_eq(wire_put_u8(&b, 0xab), 0);
	ck_assert_int_eq(wire_put_u16(&b, 0x0102), 0);
	ck_assert_int_eq(wire_put_u32(&b, 0x01020304), 0);
	ck_assert_int_eq(wire_put_u64(&b, 0x0102030405060708ULL), 0);
	ck_assert_int_eq(wire_put_i64(&b, -2), 0);
	ck_assert_int_eq(wire_put_raw(&b, "\xde\xad", 2), 0);
	ck_assert_int_eq(wire_put_str(&b, "abc", 3), 0);
	ck_assert_int_eq(wire_put_str(&b, NULL, 0), 0);
	assert_bytes(&b, want, sizeof(want));
	buf_free(&b);
}
END_TEST

START_TEST(test_put_str_too_big)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(wire_put_u8(&b, 7), 0);
	/* The length is refused before the bytes are touched. */
	ck_assert_int_eq(wire_put_str(&b, "x", (size_t)UINT32_MAX + 1), ERR_TOOBIG);
	ck_assert_uint_eq(b.len, 1);
	ck_assert_uint_eq((uint8_t)b.data[0], 7);
	buf_free(&b);
}
END_TEST

START_TEST(test_integer_extremes)
{
	static const int64_t signed_values[] = { 0, 1, -1, INT64_MAX, INT64_MIN, -1700000000 };
	static const uint64_t unsigned_values[] = { 0, 1, 0x7f, 0x80, 0xff, 0xffff, UINT32_MAX,
						    UINT64_MAX, 0x8000000000000000ULL };
	struct buf b = BUF_INIT;
	struct wire_reader r;
	size_t nu = sizeof(unsigned_values) / sizeof(unsigned_values[0]);
	size_t ns = sizeof(signed_values) / sizeof(signed_values[0]);

	for (size_t i = 0; i < nu; i++) {
		uint64_t v = unsigned_values[i];

		wire_put_u8(&b, (uint8_t)v);
		wire_put_u16(&b, (uint16_t)v);
		wire_put_u32(&b, (uint32_t)v);
		wire_put_u64(&b, v);
	}
	for (size_t i = 0; i < ns; i++)
		wire_put_i64(&b, signed_values[i]);
	wire_reader_init(&r, b.data, b.len);
	for (size_t i = 0; i < nu; i++) {
		uint64_t v = unsigned_values[i];

		ck_assert_uint_eq(wire_get_u8(&r), (uint8_t)v);
		ck_assert_uint_eq(wire_get_u16(&r), (uint16_t)v);
		ck_assert_uint_eq(wire_get_u32(&r), (uint32_t)v);
		ck_assert_uint_eq(wire_get_u64(&r), v);
	}
	for (size_t i = 0; i < ns; i++)
		ck_assert_int_eq(wire_get_i64(&r), signed_values[i]);
	ck_assert_int_eq(wire_finish(&r), 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_raw_and_str_round_trip)
{
	static const uint8_t key[32] = { 1, 2, 3, [31] = 0xff };
	static const char text[] = "with\0nul";
	struct buf b = BUF_INIT;
	struct wire_reader r;
	uint8_t key_out[32];
	const char *s;
	uint32_t len;

	wire_put_raw(&b, key, sizeof(key));
	wire_put_str(&b, text, sizeof(text) - 1);
	wire_put_str(&b, "", 0);
	wire_reader_init(&r, b.data, b.len);
	wire_get_raw(&r, key_out, sizeof(key_out));
	ck_assert(memcmp(key, key_out, sizeof(key)) == 0);
	s = wire_get_str(&r, &len, 0);
	ck_assert_uint_eq(len, sizeof(text) - 1);
	ck_assert(memcmp(s, text, len) == 0);
	ck_assert_ptr_eq(s, b.data + 32 + 4); /* a view into the payload */
	s = wire_get_str(&r, &len, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(wire_remaining(&r), 0);
	ck_assert_int_eq(wire_finish(&r), 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_short_reads)
{
	static const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct wire_reader r;

	wire_reader_init(&r, data, 1);
	ck_assert_uint_eq(wire_get_u16(&r), 0);
	ck_assert_int_eq(r.err, ERR_TRUNC);
	wire_reader_init(&r, data, 3);
	ck_assert_uint_eq(wire_get_u32(&r), 0);
	ck_assert_int_eq(r.err, ERR_TRUNC);
	wire_reader_init(&r, data, 7);
	ck_assert_uint_eq(wire_get_u64(&r), 0);
	ck_assert_int_eq(r.err, ERR_TRUNC);
	wire_reader_init(&r, data, 7);
	ck_assert_int_eq(wire_get_i64(&r), 0);
	ck_assert_int_eq(wire_finish(&r), ERR_TRUNC);
	wire_reader_init(&r, data, 0);
	ck_assert_uint_eq(wire_get_u8(&r), 0);
	ck_assert_int_eq(wire_finish(&r), ERR_TRUNC);
}
END_TEST

START_TEST(test_error_is_sticky)
{
	static const uint8_t data[6] = { 0, 0, 0, 0, 0, 9 };
	struct wire_reader r;

	wire_reader_init(&r, data, sizeof(data));
	ck_assert_uint_eq(wire_get_u32(&r), 0);
	ck_assert_uint_eq(wire_get_u64(&r), 0); /* only 2 bytes left */
	ck_assert_int_eq(r.err, ERR_TRUNC);
	/* A byte that would fit is still refused once the reader has failed. */
	ck_assert_uint_eq(wire_get_u8(&r), 0);
	ck_assert_uint_eq(wire_remaining(&r), 0);
	ck_assert_int_eq(wire_finish(&r), ERR_TRUNC);
}
END_TEST

START_TEST(test_raw_zeroed_on_failure)
{
	static const uint8_t data[4] = { 1, 2, 3, 4 };
	struct wire_reader r;
	uint8_t out[8];

	memset(out, 0xaa, sizeof(out));
	wire_reader_init(&r, data, sizeof(data));
	wire_get_raw(&r, out, sizeof(out));
	for (size_t i = 0; i < sizeof(out); i++)
		ck_assert_uint_eq(out[i], 0);
	ck_assert_int_eq(r.err, ERR_TRUNC);
}
END_TEST

START_TEST(test_str_failures)
{
	struct buf b = BUF_INIT;
	struct wire_reader r;
	uint32_t len = 99;

	wire_put_str(&b, "abcdef", 6);
	/* The length prefix promises more than is there. */
	wire_reader_init(&r, b.data, b.len - 1);
	ck_assert_ptr_null(wire_get_str(&r, &len, 0));
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(r.err, ERR_TRUNC);
	/* A bound below the length. */
	len = 99;
	wire_reader_init(&r, b.data, b.len);
	ck_assert_ptr_null(wire_get_str(&r, &len, 5));
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(wire_finish(&r), ERR_TOOBIG);
	/* A bound equal to the length is fine. */
	wire_reader_init(&r, b.data, b.len);
	ck_assert_ptr_nonnull(wire_get_str(&r, &len, 6));
	ck_assert_uint_eq(len, 6);
	ck_assert_int_eq(wire_finish(&r), 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_huge_str_length)
{
	static const uint8_t data[] = { 0xff, 0xff, 0xff, 0xff, 'a' };
	struct wire_reader r;
	uint32_t len;

	wire_reader_init(&r, data, sizeof(data));
	ck_assert_ptr_null(wire_get_str(&r, &len, 0));
	ck_assert_int_eq(wire_finish(&r), ERR_TRUNC);
}
END_TEST

START_TEST(test_remaining_and_trailing)
{
	static const uint8_t data[5] = { 0, 1, 2, 3, 4 };
	struct wire_reader r;

	wire_reader_init(&r, data, sizeof(data));
	ck_assert_uint_eq(wire_remaining(&r), 5);
	wire_get_u16(&r);
	ck_assert_uint_eq(wire_remaining(&r), 3);
	ck_assert_int_eq(wire_finish(&r), ERR_TRAILING);
	wire_get_u16(&r);
	ck_assert_int_eq(wire_finish(&r), ERR_TRAILING);
	wire_get_u8(&r);
	ck_assert_uint_eq(wire_remaining(&r), 0);
	ck_assert_int_eq(wire_finish(&r), 0);
}
END_TEST

START_TEST(test_empty_reader)
{
	struct wire_reader r;
	uint32_t len;

	wire_reader_init(&r, NULL, 0);
	ck_assert_uint_eq(wire_remaining(&r), 0);
	ck_assert_int_eq(wire_finish(&r), 0);
	ck_assert_ptr_null(wire_get_str(&r, &len, 0));
	ck_assert_int_eq(wire_finish(&r), ERR_TRUNC);
}
END_TEST

/* Every prefix of a mixed encoding fails with ERR_TRUNC; the whole succeeds. */
START_TEST(test_truncation_every_length)
{
	struct buf b = BUF_INIT;
	uint8_t raw[3];

	wire_put_u8(&b, 1);
	wire_put_u16(&b, 2);
	wire_put_u32(&b, 3);
	wire_put_u64(&b, 4);
	wire_put_i64(&b, -5);
	wire_put_raw(&b, "xyz", 3);
	wire_put_str(&b, "hello", 5);
	for (size_t n = 0; n <= b.len; n++) {
		struct wire_reader r;
		uint32_t len;

		wire_reader_init(&r, b.data, n);
		wire_get_u8(&r);
		wire_get_u16(&r);
		wire_get_u32(&r);
		wire_get_u64(&r);
		wire_get_i64(&r);
		wire_get_raw(&r, raw, sizeof(raw));
		wire_get_str(&r, &len, 0);
		ck_assert_int_eq(wire_finish(&r), n == b.len ? 0 : ERR_TRUNC);
	}
	buf_free(&b);
}
END_TEST

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_put_layout);
	tcase_add_test(tc, test_put_str_too_big);
	tcase_add_test(tc, test_integer_extremes);
	tcase_add_test(tc, test_raw_and_str_round_trip);
	tcase_add_test(tc, test_short_reads);
	tcase_add_test(tc, test_error_is_sticky);
	tcase_add_test(tc, test_raw_zeroed_on_failure);
	tcase_add_test(tc, test_str_failures);
	tcase_add_test(tc, test_huge_str_length);
	tcase_add_test(tc, test_remaining_and_trailing);
	tcase_add_test(tc, test_empty_reader);
	tcase_add_test(tc, test_truncation_every_length);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(wire_suite());
}
