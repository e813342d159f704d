/*
 * test_jsonstr.c - checks common/jsonstr.c against NIP-01's serialization
 * rule for the hash form, jsonstr_append(): exactly seven characters are
 * escaped (" \ newline CR tab backspace form feed as \" \\ \n \r \t \b \f)
 * and every other byte is written as itself; and for the wire form,
 * jsonstr_append_wire(): the same plus every other byte below 0x20 as
 * \u00xx (lowercase hex), as RFC 8259 requires.  Each of the 256 byte
 * values is checked alone, then random byte strings against a reference
 * escaper written from those rules, and cJSON must read the output back to
 * the input (for the hash form, only inputs without raw controls).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../common/jsonstr.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

static struct splitmix rng;

/* The reference: the escape letter for c, or 0 when c goes out raw. */
static char ref_escape_letter(unsigned char c)
{
	static const char from[] = "\"\\\n\r\t\b\f", to[] = "\"\\nrtbf";

	for (int i = 0; i < 7; i++)
		if ((unsigned char)from[i] == c)
			return to[i];
	return 0;
}

/* Writes the reference quoted form of s into out (6 * len + 2 bytes);
 * returns its length.  wire: also \u00xx for the other controls. */
static size_t ref_quote_as(const char *s, size_t len, char *out, int wire)
{
	size_t n = 0;

	out[n++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char letter = ref_escape_letter(c);

		if (letter) {
			out[n++] = '\\';
			out[n++] = letter;
		} else if (wire && c < 0x20) {
			n += (size_t)sprintf(out + n, "\\u%04x", c);
		} else {
			out[n++] = s[i];
		}
	}
	out[n++] = '"';
	return n;
}

static size_t ref_quote(const char *s, size_t len, char *out)
{
	return ref_quote_as(s, len, out, 0);
}

static void expect_quoted_as(const char *s, size_t len, const char *want, size_t want_len, int wire)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(wire ? jsonstr_append_wire(&b, s, len) : jsonstr_append(&b, s, len), 0);
	ck_assert_uint_eq(b.len, want_len);
	ck_assert_int_eq(memcmp(b.data, want, want_len), 0);
	ck_assert_int_eq(b.data[b.len], '\0');
	buf_free(&b);
}

static void expect_quoted(const char *s, size_t len, const char *want, size_t want_len)
{
	expect_quoted_as(s, len, want, want_len, 0);
}

#define EXPECT(in, out) expect_quoted(in, sizeof(in) - 1, out, sizeof(out) - 1)
#define EXPECT_WIRE(in, out) expect_quoted_as(in, sizeof(in) - 1, out, sizeof(out) - 1, 1)

START_TEST(test_seven_escapes)
{
	EXPECT("\"", "\"\\\"\"");
	EXPECT("\\", "\"\\\\\"");
	EXPECT("\n", "\"\\n\"");
	EXPECT("\r", "\"\\r\"");
	EXPECT("\t", "\"\\t\"");
	EXPECT("\b", "\"\\b\"");
	EXPECT("\f", "\"\\f\"");
	EXPECT("a\"b\\c\nd", "\"a\\\"b\\\\c\\nd\"");
}
END_TEST

START_TEST(test_raw_characters)
{
	EXPECT("", "\"\"");
	EXPECT("/", "\"/\"");				    /* no \/ */
	EXPECT("\x7f", "\"\x7f\"");			    /* DEL raw */
	EXPECT("\x01\x1f", "\"\x01\x1f\"");		    /* other controls raw */
	EXPECT("\xc3\xa9", "\"\xc3\xa9\"");		    /* é raw, no \u00e9 */
	EXPECT("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""); /* emoji raw */
	EXPECT("\xff\xfe", "\"\xff\xfe\"");		    /* bytes are bytes */
	EXPECT("a\0b", "\"a\0b\"");			    /* length, not NUL, ends input */
}
END_TEST

/* Each byte value alone, against the reference. */
START_TEST(test_every_byte)
{
	char in[1], want[4];

	for (int c = 0; c < 256; c++) {
		in[0] = (char)c;
		expect_quoted(in, 1, want, ref_quote(in, 1, want));
	}
}
END_TEST

START_TEST(test_appends_after_existing)
{
	struct buf b = BUF_INIT;

	ck_assert_int_eq(buf_append_str(&b, "[1,"), 0);
	ck_assert_int_eq(jsonstr_append(&b, "x\ty", 3), 0);
	ck_assert_int_eq(buf_append_byte(&b, ','), 0);
	ck_assert_int_eq(jsonstr_append(&b, "", 0), 0);
	ck_assert_str_eq(b.data, "[1,\"x\\ty\",\"\"");
	buf_free(&b);
}
END_TEST

/* Random strings weighted towards the escaped characters. */
START_TEST(test_random_against_reference)
{
	static const char pool[] = "\"\\\n\r\t\b\f/a\x01\x7f\xc3\xa9 ";
	char in[200], want[402];
	struct buf b = BUF_INIT;
	int bad = 0;

	rng.state = 99;
	for (int round = 0; round < 3000; round++) {
		size_t len = splitmix_next(&rng) % sizeof(in), want_len;

		for (size_t i = 0; i < len; i++)
			in[i] = splitmix_next(&rng) % 2
					? pool[splitmix_next(&rng) % (sizeof(pool) - 1)]
					: (char)splitmix_next(&rng);
		want_len = ref_quote(in, len, want);
		buf_reset(&b);
		bad |= jsonstr_append(&b, in, len) != 0;
		bad |= b.len != want_len || memcmp(b.data, want, want_len) != 0;
	}
	ck_assert_int_eq(bad, 0);
	buf_free(&b);
}
END_TEST

/* A JSON parser reads back what was written (valid UTF-8 without raw
 * control characters other than the escaped ones, which JSON allows). */
START_TEST(test_cjson_round_trip)
{
	static const char *const samples[] = {
		"plain",
		"quote \" and backslash \\",
		"line\nbreak\r\n\ttab",
		"\b\f",
		"caf\xc3\xa9 \xf0\x9f\x98\x80",
		"slash / and unicode escape text \\u0041",
		"",
	};
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		cJSON *parsed;

		buf_reset(&b);
		ck_assert_int_eq(jsonstr_append(&b, samples[i], strlen(samples[i])), 0);
		parsed = cJSON_Parse(b.data);
		ck_assert_msg(cJSON_IsString(parsed), "not a JSON string: %s", b.data);
		ck_assert_str_eq(parsed->valuestring, samples[i]);
		cJSON_Delete(parsed);
	}
	buf_free(&b);
}
END_TEST

START_TEST(test_wire_examples)
{
	EXPECT_WIRE("", "\"\"");
	EXPECT_WIRE("a\"b\\c\nd\te", "\"a\\\"b\\\\c\\nd\\te\"");
	EXPECT_WIRE("\x01\x1f", "\"\\u0001\\u001f\"");
	EXPECT_WIRE("a\0b", "\"a\\u0000b\"");
	EXPECT_WIRE("\x7f/\xc3\xa9\xf0\x9f\x98\x80", "\"\x7f/\xc3\xa9\xf0\x9f\x98\x80\"");
	EXPECT_WIRE("\x0b\x0e", "\"\\u000b\\u000e\"");
}
END_TEST

START_TEST(test_wire_every_byte)
{
	char in[1], want[8];

	for (int c = 0; c < 256; c++) {
		in[0] = (char)c;
		expect_quoted_as(in, 1, want, ref_quote_as(in, 1, want, 1), 1);
	}
}
END_TEST

/* Both forms agree wherever there is no raw control character. */
START_TEST(test_wire_random_against_reference)
{
	static const char pool[] = "\"\\\n\r\t\b\f/a\x01\x1f\x7f\xc3\xa9 ";
	char in[200], want[6 * 200 + 2];
	struct buf b = BUF_INIT, h = BUF_INIT;
	int bad = 0, same = 0;

	rng.state = 101;
	for (int round = 0; round < 3000; round++) {
		size_t len = splitmix_next(&rng) % sizeof(in), want_len;
		int controls = 0;

		for (size_t i = 0; i < len; i++) {
			in[i] = splitmix_next(&rng) % 2
					? pool[splitmix_next(&rng) % (sizeof(pool) - 1)]
					: (char)splitmix_next(&rng);
			controls |=
			    (unsigned char)in[i] < 0x20 && !ref_escape_letter((unsigned char)in[i]);
		}
		want_len = ref_quote_as(in, len, want, 1);
		buf_reset(&b);
		buf_reset(&h);
		bad |= jsonstr_append_wire(&b, in, len) != 0;
		bad |= b.len != want_len || memcmp(b.data, want, want_len) != 0;
		bad |= jsonstr_append(&h, in, len) != 0;
		if (!controls) {
			same++;
			bad |= h.len != b.len || memcmp(h.data, b.data, b.len) != 0;
		}
	}
	ck_assert_int_eq(bad, 0);
	ck_assert_int_gt(same, 100);
	buf_free(&b);
	buf_free(&h);
}
END_TEST

/* Every control character a decoded string can hold comes back from a
 * JSON parser. */
START_TEST(test_wire_cjson_round_trip)
{
	char in[40];
	struct buf b = BUF_INIT;
	cJSON *parsed;

	for (int c = 1; c < 0x20; c++)
		in[c - 1] = (char)c;
	memcpy(in + 31, "\"\\\x7f\xc3\xa9z", 6);
	ck_assert_int_eq(jsonstr_append_wire(&b, in, 37), 0);
	parsed = cJSON_Parse(b.data);
	ck_assert(cJSON_IsString(parsed));
	ck_assert_uint_eq(strlen(parsed->valuestring), 37);
	ck_assert_int_eq(memcmp(parsed->valuestring, in, 37), 0);
	cJSON_Delete(parsed);
	buf_free(&b);
}
END_TEST

/* \u0000 inside a string is found, wherever it sits; outside a string,
 * after an escaped backslash, or as another escape it is not. */
START_TEST(test_has_nul_escape)
{
	static const struct {
		const char *json;
		bool has;
	} cases[] = {
		{ "[\"a\\u0000b\"]", true },
		{ "{\"content\":\"x\",\"tags\":[[\"t\",\"\\u0000\"]]}", true },
		{ "[\"\\u0000\"]", true },
		{ "[\"\\\\\\u0000\"]", true },     /* an escaped backslash, then the escape */
		{ "[\"\\\\u0000\"]", false },      /* a backslash, then the text u0000 */
		{ "[\"\\\"\\u0000\"]", true },     /* an escaped quote does not end the string */
		{ "[\"a\",\"\\u00000\"]", true },
		{ "[\"\\u0001\\u00e9\"]", false },
		{ "[\"no escape\"]", false },
		{ "[\"\\u000\"]", false },         /* too short */
		{ "\\u0000", false },              /* not inside a string */
		{ "", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(jsonstr_has_nul_escape(cases[i].json, strlen(cases[i].json)) == cases[i].has,
			      "case %zu: %s", i, cases[i].json);
	/* The end of the text is the end: no reading past len. */
	ck_assert(!jsonstr_has_nul_escape("[\"\\u0000\"]", 6));
}
END_TEST

static Suite *jsonstr_suite(void)
{
	Suite *s = suite_create("jsonstr");
	TCase *tc = tcase_create("jsonstr");

	tcase_add_test(tc, test_seven_escapes);
	tcase_add_test(tc, test_raw_characters);
	tcase_add_test(tc, test_every_byte);
	tcase_add_test(tc, test_appends_after_existing);
	tcase_add_test(tc, test_random_against_reference);
	tcase_add_test(tc, test_cjson_round_trip);
	suite_add_tcase(s, tc);
	tc = tcase_create("wire");
	tcase_add_test(tc, test_wire_examples);
	tcase_add_test(tc, test_wire_every_byte);
	tcase_add_test(tc, test_wire_random_against_reference);
	tcase_add_test(tc, test_wire_cjson_round_trip);
	tcase_add_test(tc, test_has_nul_escape);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(jsonstr_suite());
}
