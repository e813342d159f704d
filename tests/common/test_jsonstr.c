/*
 * test_jsonstr.c - checks common/jsonstr.c against NIP-01's serialization
 * rule for the hash form, jsonstr_append(): exactly seven characters are
 * escaped (" \ newline CR tab backspace form feed as \" \\ \n \r \t \b \f)
 * and every other byte is written as itself; and for the wire form,
 * jsonstr_append_wire(): the same plus every other byte below 0x20 as
 * \u00xx (lowercase hex), as RFC 8259 requires.  Each of the 256 byte
 * values is checked alone, then random byte strings against a reference
 * escaper written from those rules, and cJSON must read the output back to
 * the input (for the hash form, only inputs without raw controls).  The
 * pair C0 80, a decoded U+0000 (json.h), is written as U+0000 by both.
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

		if (i + 1 < len && c == 0xc0 && (unsigned char)s[i + 1] == 0x80) {
			c = 0; /* a decoded U+0000 */
			i++;
		}
		if (letter) {
			out[n++] = '\\';
			out[n++] = letter;
		} else if (wire && c < 0x20) {
			n += (size_t)sprintf(out + n, "\\u%04x", c);
		} else {
			out[n++] = (char)c;
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

/* C0 80 stands for U+0000 (json.h): a NUL in the hash, \u0000 on the wire.
 * A lone C0 or 80 is only a byte. */
START_TEST(test_decoded_nul)
{
	EXPECT("a\xc0\x80" "b", "\"a\0b\"");
	EXPECT("\xc0\x80\xc0\x80", "\"\0\0\"");
	EXPECT("\xc0\xc0\x80", "\"\xc0\0\"");
	EXPECT("\xc0", "\"\xc0\"");
	EXPECT("\x80\xc0", "\"\x80\xc0\"");
	EXPECT_WIRE("a\xc0\x80" "b", "\"a\\u0000b\"");
	EXPECT_WIRE("\xc0\x80\xc0\x80", "\"\\u0000\\u0000\"");
	EXPECT_WIRE("\xc0\xc0\x80", "\"\xc0\\u0000\"");
	EXPECT_WIRE("\xc0", "\"\xc0\"");
	/* The length ends the input: a C0 at its end is alone. */
	expect_quoted_as("\xc0\x80", 1, "\"\xc0\"", 3, 1);
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
	static const char pool[] = "\"\\\n\r\t\b\f/a\x01\x7f\xc3\xa9\xc0\x80 ";
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
	static const char pool[] = "\"\\\n\r\t\b\f/a\x01\x1f\x7f\xc3\xa9\xc0\x80 ";
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
			controls |= i && (unsigned char)in[i - 1] == 0xc0 && (unsigned char)in[i] == 0x80;
		}
		want_len = ref_quote_as(in, len, want, 1);
		buf_reset(&b);
		buf_reset(&h);
		bad |= jsonstr_append_wire(&b, in, len) != 0;
		bad |= b.len != want_len || memcmp(b.data, want, want_len) != 0;
		bad |= jsonstr_append(&h, in, len) != 0;
		bad |= jsonstr_forms_differ(in, len) != (controls != 0);
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

/* The forms differ exactly for a control character other than the seven
 * or a decoded U+0000. */
START_TEST(test_forms_differ)
{
	static const struct {
		const char *s;
		bool differ;
	} cases[] = {
		{ "plain", false },	     { "\"\\\n\r\t\b\f", false }, { "\x7f/\xc3\xa9", false },
		{ "", false },		     { "a\x01", true },		 { "\x1f", true },
		{ "\x0b", true },	     { "a\xc0\x80" "b", true },	 { "\xc0", false },
		{ "\x80\xc0", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(jsonstr_forms_differ(cases[i].s, strlen(cases[i].s)) == cases[i].differ,
			      "case %zu", i);
	ck_assert(jsonstr_forms_differ("a\0b", 3)); /* a NUL byte itself */
	ck_assert(!jsonstr_forms_differ("\xc0\x80", 1));
}
END_TEST

START_TEST(test_decoded_len)
{
	ck_assert_uint_eq(jsonstr_decoded_len("", 0), 0);
	ck_assert_uint_eq(jsonstr_decoded_len("abc", 3), 3);
	ck_assert_uint_eq(jsonstr_decoded_len("a\xc0\x80" "b", 4), 3);
	ck_assert_uint_eq(jsonstr_decoded_len("\xc0\x80\xc0\x80", 4), 2);
	ck_assert_uint_eq(jsonstr_decoded_len("\xc0\xc0\x80", 3), 2);
	ck_assert_uint_eq(jsonstr_decoded_len("\xc0\x80", 1), 1);
}
END_TEST

static Suite *jsonstr_suite(void)
{
	Suite *s = suite_create("jsonstr");
	TCase *tc = tcase_create("jsonstr");

	tcase_add_test(tc, test_seven_escapes);
	tcase_add_test(tc, test_raw_characters);
	tcase_add_test(tc, test_decoded_nul);
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
	tcase_add_test(tc, test_forms_differ);
	tcase_add_test(tc, test_decoded_len);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(jsonstr_suite());
}
