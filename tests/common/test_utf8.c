/*
 * test_utf8.c - checks common/utf8.c: characters counted as Nostr's limits
 * count them, and prefixes cut between characters.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/utf8.h"
#include "../support/suite.h"

static size_t chars(const char *s)
{
	return utf8_chars(s, strlen(s));
}

START_TEST(test_ascii_is_one_per_byte)
{
	ck_assert_uint_eq(chars(""), 0);
	ck_assert_uint_eq(chars("a"), 1);
	ck_assert_uint_eq(chars("hello nostr"), 11);
}
END_TEST

START_TEST(test_each_sequence_length_is_one_character)
{
	ck_assert_uint_eq(chars("\303\251"), 1);             /* é, 2 bytes */
	ck_assert_uint_eq(chars("\342\202\254"), 1);         /* €, 3 bytes */
	ck_assert_uint_eq(chars("\360\237\230\200"), 1);     /* 😀, 4 bytes */
	ck_assert_uint_eq(chars("a\303\251\342\202\254\360\237\230\200z"), 5);
}
END_TEST

/* Only the given length is read: a count over part of a text stops there,
 * and a NUL inside it counts as a character. */
START_TEST(test_length_bounds_the_count)
{
	const char text[] = "\303\251\303\251\303\251";

	ck_assert_uint_eq(utf8_chars(text, 4), 2);
	ck_assert_uint_eq(utf8_chars(text, 0), 0);
	ck_assert_uint_eq(utf8_chars("a\0b", 3), 3);
}
END_TEST

/* A prefix never ends inside a character, a decoded U+0000 (C0 80)
 * included; a text that fits is kept whole. */
START_TEST(test_prefix_between_characters)
{
	const char text[] = "a\303\251\360\237\230\200\300\200z";

	ck_assert_uint_eq(utf8_prefix(text, 10, 100), 10);
	ck_assert_uint_eq(utf8_prefix(text, 10, 10), 10);
	ck_assert_uint_eq(utf8_prefix(text, 10, 9), 9);
	ck_assert_uint_eq(utf8_prefix(text, 10, 8), 7); /* not between C0 and 80 */
	ck_assert_uint_eq(utf8_prefix(text, 10, 7), 7);
	for (size_t max = 3; max < 7; max++)
		ck_assert_uint_eq(utf8_prefix(text, 10, max), 3); /* not inside the emoji */
	ck_assert_uint_eq(utf8_prefix(text, 10, 2), 1);
	ck_assert_uint_eq(utf8_prefix(text, 10, 1), 1);
	ck_assert_uint_eq(utf8_prefix(text, 10, 0), 0);
	ck_assert_uint_eq(utf8_prefix("", 0, 5), 0);
}
END_TEST

static Suite *utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("utf8");

	tcase_add_test(tc, test_ascii_is_one_per_byte);
	tcase_add_test(tc, test_each_sequence_length_is_one_character);
	tcase_add_test(tc, test_length_bounds_the_count);
	tcase_add_test(tc, test_prefix_between_characters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(utf8_suite());
}
