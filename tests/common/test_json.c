/*
 * test_json.c - checks common/json.c: json_parse() reads \u0000 in a string
 * as the pair C0 80 and leaves every other text as cJSON reads it, follows
 * string boundaries and escapes (an escaped backslash before u0000 is no
 * NUL), refuses raw C0 80 and, with whole, trailing text; json_print()
 * writes the pair back as \u0000.  Random strings make the round trip
 * text -> tree -> text through both.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "../../common/jsonstr.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

/* The decoded string of the JSON string text, or fails the test. */
static char *parsed_string(const char *text)
{
	cJSON *item = json_parse(text, strlen(text), true);
	char *s;

	ck_assert_msg(cJSON_IsString(item), "not read as a string: %s", text);
	s = strdup(item->valuestring);
	cJSON_Delete(item);
	return s;
}

#define EXPECT_STRING(text, want)                                 \
	do {                                                      \
		char *got_ = parsed_string(text);                 \
		ck_assert_str_eq(got_, want);                     \
		free(got_);                                       \
	} while (0)

START_TEST(test_nul_escape_decodes_to_pair)
{
	EXPECT_STRING("\"a\\u0000b\"", "a\xc0\x80" "b");
	EXPECT_STRING("\"\\u0000\\u0000\"", "\xc0\x80\xc0\x80");
	EXPECT_STRING("\"\\u00000\"", "\xc0\x80" "0");
	/* an escaped backslash, then the text u0000: no NUL */
	EXPECT_STRING("\"\\\\u0000\"", "\\u0000");
	/* an escaped backslash, then the escape */
	EXPECT_STRING("\"\\\\\\u0000\"", "\\\xc0\x80");
	/* an escaped quote does not end the string */
	EXPECT_STRING("\"\\\"\\u0000\"", "\"\xc0\x80");
	/* other escapes are cJSON's own */
	EXPECT_STRING("\"\\u0001\\u00e9\\n\"", "\x01\xc3\xa9\n");
	EXPECT_STRING("\"plain\"", "plain");
}
END_TEST

START_TEST(test_nul_in_keys_and_nested)
{
	const char text[] = "{\"k\\u0000\":[[\"t\",\"x\\u0000y\"]],\"c\":\"\\u0000\"}";
	cJSON *obj = json_parse(text, sizeof(text) - 1, true);
	const cJSON *tags, *c;

	ck_assert_ptr_nonnull(obj);
	tags = cJSON_GetObjectItemCaseSensitive(obj, "k\xc0\x80");
	ck_assert_ptr_nonnull(tags);
	ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(tags, 0), 1)->valuestring,
			 "x\xc0\x80y");
	c = cJSON_GetObjectItemCaseSensitive(obj, "c");
	ck_assert_str_eq(c->valuestring, "\xc0\x80");
	cJSON_Delete(obj);
}
END_TEST

START_TEST(test_refusals)
{
	/* raw C0 80 is invalid UTF-8 and would read as a NUL */
	ck_assert_ptr_null(json_parse("\"a\xc0\x80\"", 5, false));
	ck_assert_ptr_null(json_parse("[1]\xc0\x80", 5, false));
	ck_assert_ptr_null(json_parse("", 0, false));
	ck_assert_ptr_null(json_parse(NULL, 0, false));
	ck_assert_ptr_null(json_parse("[\"\\u000\"]", 9, true)); /* too short */
	ck_assert_ptr_null(json_parse("\\u0000", 6, false));	  /* not in a string */
	ck_assert_ptr_null(json_parse("[\"\\u0000", 8, false));   /* unterminated */
}
END_TEST

START_TEST(test_whole)
{
	cJSON *item;

	ck_assert_ptr_null(json_parse("[1] x", 5, true));
	ck_assert_ptr_null(json_parse("[1][2]", 6, true));
	ck_assert_ptr_null(json_parse("[\"\\u0000\"] x", 12, true));
	item = json_parse("[1] x", 5, false);
	ck_assert_ptr_nonnull(item);
	cJSON_Delete(item);
	item = json_parse(" [1] \r\n\t", 8, true);
	ck_assert_ptr_nonnull(item);
	cJSON_Delete(item);
	/* len ends the text: what follows is never read */
	item = json_parse("[\"\\u0000\"]garbage", 10, true);
	ck_assert_ptr_nonnull(item);
	ck_assert_str_eq(cJSON_GetArrayItem(item, 0)->valuestring, "\xc0\x80");
	cJSON_Delete(item);
}
END_TEST

START_TEST(test_print)
{
	cJSON *arr = cJSON_CreateArray();
	char *text;

	cJSON_AddItemToArray(arr, cJSON_CreateString("a\xc0\x80" "b\x01"));
	cJSON_AddItemToArray(arr, cJSON_CreateString("\xc0\x80"));
	cJSON_AddItemToArray(arr, cJSON_CreateString("plain"));
	text = json_print(arr, false);
	ck_assert_str_eq(text, "[\"a\\u0000b\\u0001\",\"\\u0000\",\"plain\"]");
	free(text);
	text = json_print(arr, true);
	ck_assert_ptr_nonnull(strstr(text, "\"a\\u0000b\\u0001\""));
	ck_assert_ptr_null(strstr(text, "\xc0\x80"));
	free(text);
	cJSON_Delete(arr);
	arr = cJSON_CreateObject();
	cJSON_AddNumberToObject(arr, "n", 1);
	text = json_print(arr, false);
	ck_assert_str_eq(text, "{\"n\":1}");
	free(text);
	cJSON_Delete(arr);
}
END_TEST

/* Random strings of pieces (NUL, other controls, escapes, non-ASCII):
 * written as wire JSON, read back, printed again, byte for byte. */
START_TEST(test_random_round_trip)
{
	static const char *const pieces[] = { "a", "\x01", "\x1f", "\\", "\"", "\n",
					      "\xc3\xa9", "u0000", "/", " " };
	struct splitmix rng = { 7 };
	struct buf in = BUF_INIT, want = BUF_INIT, text = BUF_INIT;

	for (int round = 0; round < 2000; round++) {
		size_t n = splitmix_next(&rng) % 24;
		cJSON *item;
		char *printed;

		buf_reset(&in);
		buf_reset(&want);
		for (size_t i = 0; i < n; i++) {
			size_t k = splitmix_next(&rng) % 11;

			if (k == 10) { /* U+0000 */
				ck_assert_int_eq(buf_append_byte(&in, '\0'), 0);
				ck_assert_int_eq(buf_append_str(&want, JSON_NUL), 0);
			} else {
				ck_assert_int_eq(buf_append_str(&in, pieces[k]), 0);
				ck_assert_int_eq(buf_append_str(&want, pieces[k]), 0);
			}
		}
		buf_reset(&text);
		ck_assert_int_eq(jsonstr_append_wire(&text, in.data, in.len), 0);
		item = json_parse(text.data, text.len, true);
		ck_assert_msg(cJSON_IsString(item), "round %d: %s", round, text.data);
		ck_assert_uint_eq(strlen(item->valuestring), want.len);
		ck_assert_int_eq(memcmp(item->valuestring, want.data, want.len), 0);
		printed = json_print(item, false);
		ck_assert_str_eq(printed, text.data);
		free(printed);
		cJSON_Delete(item);
	}
	buf_free(&in);
	buf_free(&want);
	buf_free(&text);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, test_nul_escape_decodes_to_pair);
	tcase_add_test(tc, test_nul_in_keys_and_nested);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_whole);
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_random_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(json_suite());
}
