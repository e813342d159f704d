/*
 * test_filter_json.c - checks common/filter_json.c: filter_to_json() writes
 * each field only when present, in a fixed order, with exact text; what it
 * writes parses back (filter_parse) to a filter that writes the same text
 * again; tag values with quotes, backslashes, control bytes and NUL survive.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../common/filter.h"
#include "../../common/json.h"
#include "../support/suite.h"

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void parse(const char *text, struct filter *f)
{
	cJSON *obj = json_parse(text, strlen(text), true);
	char reason[160];

	ck_assert_ptr_nonnull(obj);
	ck_assert_msg(filter_parse(obj, NULL, f, reason, sizeof(reason)) == 0, "%s: %s", text,
		      reason);
	cJSON_Delete(obj);
}

/* filter_to_json() of f as a malloc'ed string. */
static char *to_json(const struct filter *f)
{
	struct buf out = BUF_INIT;

	ck_assert_int_eq(filter_to_json(f, &out), 0);
	return buf_take(&out);
}

static const struct {
	const char *in, *out;
} cases[] = {
	{ "{}", "{}" },
	{ "{\"kinds\":[]}", "{\"kinds\":[]}" },
	{ "{\"ids\":[],\"authors\":[]}", "{\"ids\":[],\"authors\":[]}" },
	{ "{\"limit\":0}", "{\"limit\":0}" },
	{ "{\"search\":\"best \\\"nostr\\\" apps\"}", "{\"search\":\"best \\\"nostr\\\" apps\"}" },
	/* input order does not matter; output order is fixed */
	{ "{\"search\":\"s\",\"limit\":5,\"until\":20,\"since\":-3,\"#t\":[\"x\",\"\"],"
	  "\"kinds\":[1,65535,0],\"authors\":[\"" HEX_B "\"],"
	  "\"ids\":[\"" HEX_A "\",\"" HEX_B "\"]}",
	  "{\"ids\":[\"" HEX_A "\",\"" HEX_B "\"],\"authors\":[\"" HEX_B "\"],"
	  "\"kinds\":[1,65535,0],\"#t\":[\"x\",\"\"],\"since\":-3,\"until\":20,\"limit\":5,"
	  "\"search\":\"s\"}" },
	{ "{\"#e\":[\"" HEX_A "\"],\"#T\":[\"Up\"],\"#p\":[\"" HEX_B "\"]}",
	  "{\"#e\":[\"" HEX_A "\"],\"#T\":[\"Up\"],\"#p\":[\"" HEX_B "\"]}" },
	{ "{\"#d\":[\"a\\\\b\\n\\u0001\\u001f\\u007f\\u00e9\"]}",
	  "{\"#d\":[\"a\\\\b\\n\\u0001\\u001f\x7f\xc3\xa9\"]}" },
	/* U+0000 in a tag value and in search comes back as \u0000 */
	{ "{\"#t\":[\"a\\u0000b\",\"\\\\u0000\"],\"search\":\"x\\u0000y\"}",
	  "{\"#t\":[\"a\\u0000b\",\"\\\\u0000\"],\"search\":\"x\\u0000y\"}" },
	{ "{\"since\":9007199254740991,\"until\":0}", "{\"since\":9007199254740991,\"until\":0}" },
	{ "{\"unknown\":1,\"#xy\":[\"z\"]}", "{}" },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(test_exact_text)
{
	struct filter f;
	char *text;

	parse(cases[_i].in, &f);
	text = to_json(&f);
	ck_assert_str_eq(text, cases[_i].out);
	free(text);
	filter_free(&f);
}
END_TEST

/* Written, parsed and written again: the same text, and a filter that
 * filter_copy's deep copy also writes identically. */
START_TEST(test_round_trip)
{
	struct filter f, g, h;
	char *once, *twice, *copied;

	parse(cases[_i].in, &f);
	once = to_json(&f);
	parse(once, &g);
	twice = to_json(&g);
	ck_assert_str_eq(once, twice);
	ck_assert_int_eq(filter_copy(&h, &g), 0);
	copied = to_json(&h);
	ck_assert_str_eq(once, copied);
	free(once);
	free(twice);
	free(copied);
	filter_free(&f);
	filter_free(&g);
	filter_free(&h);
}
END_TEST

/* A value holding NUL (which JSON input through cJSON cannot carry) is
 * written whole, as \u0000. */
START_TEST(test_nul_in_value)
{
	struct filter f;
	char *text;

	filter_init(&f);
	f.ntags = 1;
	f.tags = calloc(1, sizeof(*f.tags));
	f.tags[0].name = 'r';
	f.tags[0].nvalues = 1;
	f.tags[0].values = calloc(1, sizeof(char *));
	f.tags[0].lens = calloc(1, sizeof(uint32_t));
	f.tags[0].values[0] = malloc(4);
	memcpy(f.tags[0].values[0], "a\0b", 4);
	f.tags[0].lens[0] = 3;
	text = to_json(&f);
	ck_assert_str_eq(text, "{\"#r\":[\"a\\u0000b\"]}");
	free(text);
	filter_free(&f);
}
END_TEST

/* Appends to what the buffer already holds. */
START_TEST(test_appends)
{
	struct buf out = BUF_INIT;
	struct filter f;

	filter_init(&f);
	buf_append_str(&out, "[");
	ck_assert_int_eq(filter_to_json(&f, &out), 0);
	buf_append_str(&out, ",");
	ck_assert_int_eq(filter_to_json(&f, &out), 0);
	buf_append_str(&out, "]");
	ck_assert_str_eq(out.data, "[{},{}]");
	buf_free(&out);
}
END_TEST

static Suite *filter_json_suite(void)
{
	Suite *s = suite_create("filter_json");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_exact_text, 0, (int)NCASES);
	tcase_add_loop_test(tc, test_round_trip, 0, (int)NCASES);
	tcase_add_test(tc, test_nul_in_value);
	tcase_add_test(tc, test_appends);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(filter_json_suite());
}
