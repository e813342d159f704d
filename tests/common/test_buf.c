/*
 * test_buf.c - checks common/buf.c: appends of every kind, NUL termination,
 * reserve/reset/take/free, an allocation failure leaving the contents
 * intact, and random append sequences against a plain fixed array.
 */
#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

/* The allocation-failure test asks for an absurd size; under
 * AddressSanitizer that must fail like malloc does, not abort the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static struct splitmix rng;

/* The buffer's invariants: len within cap, and a NUL after the data. */
static void check_invariants(const struct buf *b)
{
	if (!b->data) {
		ck_assert_uint_eq(b->len, 0);
		ck_assert_uint_eq(b->cap, 0);
		return;
	}
	ck_assert_uint_lt(b->len, b->cap);
	ck_assert_int_eq(b->data[b->len], '\0');
}

START_TEST(test_init_empty)
{
	struct buf b = BUF_INIT;

	check_invariants(&b);
	buf_reset(&b); /* nothing allocated yet: harmless */
	check_invariants(&b);
	buf_free(&b);
	buf_free(&b);
	check_invariants(&b);
}
END_TEST

START_TEST(test_appends)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(buf_append_str(&b, "ab"), 0);
	ck_assert_int_eq(buf_append_byte(&b, 'c'), 0);
	ck_assert_int_eq(buf_append(&b, "d\0e", 3), 0);
	ck_assert_int_eq(buf_append(&b, "ignored", 0), 0);
	ck_assert_int_eq(buf_append_str(&b, ""), 0);
	ck_assert_uint_eq(b.len, 6);
	ck_assert_int_eq(memcmp(b.data, "abcd\0e", 7), 0);
	check_invariants(&b);
	buf_free(&b);
}
END_TEST

START_TEST(test_append_zero_to_empty)
{
	struct buf b = BUF_INIT;

	/* Even an empty append leaves printable (NUL-terminated) data. */
	ck_assert_int_eq(buf_append(&b, NULL, 0), 0);
	ck_assert_ptr_nonnull(b.data);
	ck_assert_str_eq(b.data, "");
	check_invariants(&b);
	buf_free(&b);
}
END_TEST

START_TEST(test_append_int)
{
	static const int64_t values[] = { 0, 1, -1, 9, 10, -10, 1700000000, INT64_MAX, INT64_MIN };
	struct buf b = BUF_INIT;
	char want[32];

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		buf_reset(&b);
		ck_assert_int_eq(buf_append_int(&b, values[i]), 0);
		snprintf(want, sizeof(want), "%" PRId64, values[i]);
		ck_assert_str_eq(b.data, want);
		ck_assert_uint_eq(b.len, strlen(want));
	}
	ck_assert_str_eq(b.data, "-9223372036854775808");
	buf_free(&b);
}
END_TEST

START_TEST(test_reserve)
{
	struct buf b = BUF_INIT;
	char *before;

	ck_assert_int_eq(buf_append_str(&b, "xy"), 0);
	ck_assert_int_eq(buf_reserve(&b, 1000), 0);
	ck_assert_uint_ge(b.cap, b.len + 1000 + 1);
	ck_assert_str_eq(b.data, "xy");
	/* Within the reservation nothing moves. */
	before = b.data;
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(buf_append_byte(&b, 'z'), 0);
	ck_assert_ptr_eq(b.data, before);
	ck_assert_uint_eq(b.len, 1002);
	check_invariants(&b);
	/* Reserving what is already there changes nothing. */
	ck_assert_int_eq(buf_reserve(&b, 0), 0);
	ck_assert_ptr_eq(b.data, before);
	buf_free(&b);
}
END_TEST

START_TEST(test_reset_keeps_memory)
{
	struct buf b = BUF_INIT;
	char *data;
	size_t cap;

	ck_assert_int_eq(buf_append_str(&b, "hello world"), 0);
	data = b.data;
	cap = b.cap;
	buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_ptr_eq(b.data, data);
	ck_assert_uint_eq(b.cap, cap);
	ck_assert_str_eq(b.data, "");
	ck_assert_int_eq(buf_append_str(&b, "again"), 0);
	ck_assert_str_eq(b.data, "again");
	buf_free(&b);
}
END_TEST

START_TEST(test_take)
{
	struct buf b = BUF_INIT;
	char *text;

	ck_assert_int_eq(buf_append_str(&b, "taken"), 0);
	text = buf_take(&b);
	ck_assert_str_eq(text, "taken");
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_uint_eq(b.cap, 0);
	free(text);
	/* Taking from an empty buffer still hands over an empty string. */
	text = buf_take(&b);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "");
	free(text);
	/* The buffer is reusable after a take. */
	ck_assert_int_eq(buf_append_str(&b, "more"), 0);
	ck_assert_str_eq(b.data, "more");
	buf_free(&b);
}
END_TEST

/* A reservation that cannot be satisfied fails and leaves the contents. */
START_TEST(test_nomem_keeps_contents)
{
	struct buf b = BUF_INIT;
	char *data;

	ck_assert_int_eq(buf_append_str(&b, "keep me"), 0);
	data = b.data;
	ck_assert_int_eq(buf_reserve(&b, (size_t)1 << 60), ERR_NOMEM);
	ck_assert_ptr_eq(b.data, data);
	ck_assert_str_eq(b.data, "keep me");
	ck_assert_uint_eq(b.len, 7);
	check_invariants(&b);
	buf_free(&b);
}
END_TEST

/*
 * FIXED BUG (buf.c, buf_reserve): `need = b->len + extra + 1` wraps for
 * extra near SIZE_MAX, so the call returns 0 without reserving anything;
 * and for need > SIZE_MAX/2 + 1 `cap *= 2` wraps to 0 and the loop never
 * ends.  Both should be ERR_NOMEM.
 */
START_TEST(test_reserve_overflow)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(buf_append_str(&b, "0123456789"), 0);
	ck_assert_int_eq(buf_reserve(&b, SIZE_MAX - 5), ERR_NOMEM);
	ck_assert_int_eq(buf_reserve(&b, SIZE_MAX / 2 + 100), ERR_NOMEM);
	ck_assert_str_eq(b.data, "0123456789");
	buf_free(&b);
}
END_TEST

/* Random appends against a plain array holding what must be there. */
START_TEST(test_random_against_array)
{
	enum { MAX = 1 << 17 };
	char *want = malloc(MAX);
	struct buf b = BUF_INIT;
	size_t len = 0;
	int bad = 0;

	rng.state = 12345;
	for (int step = 0; step < 5000 && len < MAX - 64; step++) {
		char chunk[48];
		size_t n = splitmix_next(&rng) % sizeof(chunk);

		for (size_t i = 0; i < n; i++)
			chunk[i] = (char)splitmix_next(&rng);
		switch (splitmix_next(&rng) % 8) {
		case 0:
			bad |= buf_append_byte(&b, chunk[0]);
			want[len++] = chunk[0];
			break;
		case 1:
			if (splitmix_next(&rng) % 16 == 0) {
				buf_reset(&b);
				len = 0;
			}
			break;
		default:
			bad |= buf_append(&b, chunk, n);
			memcpy(want + len, chunk, n);
			len += n;
		}
		bad |= b.len != len || b.data[len] != '\0' || memcmp(b.data, want, len) != 0;
	}
	ck_assert_int_eq(bad, 0);
	ck_assert_uint_gt(len, 1000);
	check_invariants(&b);
	buf_free(&b);
	free(want);
}
END_TEST

static Suite *buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");

	tcase_add_test(tc, test_init_empty);
	tcase_add_test(tc, test_appends);
	tcase_add_test(tc, test_append_zero_to_empty);
	tcase_add_test(tc, test_append_int);
	tcase_add_test(tc, test_reserve);
	tcase_add_test(tc, test_reset_keeps_memory);
	tcase_add_test(tc, test_take);
	tcase_add_test(tc, test_nomem_keeps_contents);
	tcase_set_timeout(tc, 5);
	tcase_add_test(tc, test_reserve_overflow);
	tcase_add_test(tc, test_random_against_array);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(buf_suite());
}
