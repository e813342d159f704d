/*
 * test_reply.c - checks relayd/reply.c: the exact text of every NIP-01
 * relay message (OK, NOTICE, CLOSED, EOSE, EVENT and its head), with
 * subscription ids and messages holding quotes, backslashes, non-ASCII and
 * control characters escaped as NIP-01 serializes strings (" \ and
 * \n \r \t \b \f as two-character escapes) plus, because a frame must be
 * valid JSON (RFC 8259; browsers' JSON.parse refuses raw controls), the
 * other characters below U+0020 as \u00XX; DEL and non-ASCII stay raw.
 * Each frame must also parse with cJSON as an array whose strings give back
 * the original bytes.
 *
 * Expected frames are written out by hand.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../relayd/reply.h"
#include "../support/suite.h"

/* Checks frame (with its *len) against want, then frees it. */
static void expect_frame(char *frame, size_t len, const char *want, size_t want_len)
{
	ck_assert_ptr_nonnull(frame);
	ck_assert_msg(len == want_len && memcmp(frame, want, len) == 0, "got %s\nwant %s", frame,
		      want);
	ck_assert_int_eq(frame[len], '\0');
	free(frame);
}

/* expr is a reply_* call writing len; the frame is taken before len is read. */
#define EXPECT(expr, want)                                                                         \
	do {                                                                                       \
		char *frame_ = (expr);                                                             \
		expect_frame(frame_, len, want, sizeof(want) - 1);                                 \
	} while (0)

static const uint8_t id[32] = { 0x00, 0x01, 0x02, 0xab, 0xcd, 0xef, [31] = 0xff };
#define ID_HEX "000102abcdef00000000000000000000000000000000000000000000000000ff"

START_TEST(test_ok)
{
	size_t len = 0;

	EXPECT(reply_ok(id, true, "", &len), "[\"OK\",\"" ID_HEX "\",true,\"\"]");
	EXPECT(reply_ok(id, true, "duplicate: already have this event", &len),
	       "[\"OK\",\"" ID_HEX "\",true,\"duplicate: already have this event\"]");
	EXPECT(reply_ok(id, false, "invalid: \"sig\" is\\bad\n", &len),
	       "[\"OK\",\"" ID_HEX "\",false,\"invalid: \\\"sig\\\" is\\\\bad\\n\"]");
}
END_TEST

START_TEST(test_notice)
{
	size_t len = 0;

	EXPECT(reply_notice("error: bad message", &len), "[\"NOTICE\",\"error: bad message\"]");
	EXPECT(reply_notice("", &len), "[\"NOTICE\",\"\"]");
	EXPECT(reply_notice("tab\there \xc3\xa9", &len), "[\"NOTICE\",\"tab\\there \xc3\xa9\"]");
}
END_TEST

START_TEST(test_closed_eose)
{
	size_t len = 0;

	EXPECT(reply_closed("sub1", 4, "error: too many subscriptions", &len),
	       "[\"CLOSED\",\"sub1\",\"error: too many subscriptions\"]");
	EXPECT(reply_closed("s", 1, "", &len), "[\"CLOSED\",\"s\",\"\"]");
	EXPECT(reply_eose("sub1", 4, &len), "[\"EOSE\",\"sub1\"]");
	/* The length, not a NUL, ends the id: only sub_len bytes are used. */
	EXPECT(reply_eose("abcdef", 3, &len), "[\"EOSE\",\"abc\"]");
	EXPECT(reply_eose("a\0b", 3, &len), "[\"EOSE\",\"a\\u0000b\"]");
}
END_TEST

START_TEST(test_event)
{
	static const char json[] = "{\"id\":\"x\",\"content\":\"a\\nb\"}";
	size_t len = 0;

	EXPECT(reply_event_head("sub", 3, &len), "[\"EVENT\",\"sub\",");
	/* The event JSON is already serialized: it goes in verbatim. */
	EXPECT(reply_event("sub", 3, json, sizeof(json) - 1, &len),
	       "[\"EVENT\",\"sub\",{\"id\":\"x\",\"content\":\"a\\nb\"}]");
}
END_TEST

/* Subscription ids a client may choose, and how each must come back. */
static const struct {
	const char *id;
	const char *escaped;
} sub_ids[] = {
	{ "plain", "\"plain\"" },
	{ "with \"quotes\"", "\"with \\\"quotes\\\"\"" },
	{ "back\\slash\\", "\"back\\\\slash\\\\\"" },
	{ "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	  "\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\"" },
	{ "nl\ncr\rtab\tbs\bff\f", "\"nl\\ncr\\rtab\\tbs\\bff\\f\"" },
	{ "ctl\x01\x1f del\x7f", "\"ctl\\u0001\\u001f del\x7f\"" },
	{ "slash/ \\u0041", "\"slash/ \\\\u0041\"" },
	{ "]\",[\"", "\"]\\\",[\\\"\"" },
};
#define NSUB_IDS (sizeof(sub_ids) / sizeof(sub_ids[0]))

/* Parses frame; checks it is an array of n items whose item at sub_at is
 * the string sub (byte for byte).  Returns the parsed array. */
static cJSON *parse_frame(const char *frame, int n, int sub_at, const char *sub)
{
	cJSON *arr = cJSON_Parse(frame);
	const cJSON *item;

	ck_assert_msg(cJSON_IsArray(arr), "not JSON: %s", frame);
	ck_assert_int_eq(cJSON_GetArraySize(arr), n);
	item = cJSON_GetArrayItem(arr, sub_at);
	ck_assert(cJSON_IsString(item));
	ck_assert_str_eq(item->valuestring, sub);
	return arr;
}

static void expect_escaped_frame(char *frame, size_t len, const char *prefix, const char *escaped,
				 const char *suffix)
{
	char want[512];
	int n = snprintf(want, sizeof(want), "%s%s%s", prefix, escaped, suffix);

	expect_frame(frame, len, want, (size_t)n);
}

START_TEST(test_sub_id_escaping)
{
	const char *sub = sub_ids[_i].id, *esc = sub_ids[_i].escaped;
	size_t sub_len = strlen(sub), len = 0;
	char *frame;

	frame = reply_eose(sub, sub_len, &len);
	cJSON_Delete(parse_frame(frame, 2, 1, sub));
	expect_escaped_frame(frame, len, "[\"EOSE\",", esc, "]");

	frame = reply_closed(sub, sub_len, sub, &len); /* the message escapes alike */
	cJSON_Delete(parse_frame(frame, 3, 1, sub));
	cJSON_Delete(parse_frame(frame, 3, 2, sub));
	{
		char suffix[256];

		snprintf(suffix, sizeof(suffix), ",%s]", esc);
		expect_escaped_frame(frame, len, "[\"CLOSED\",", esc, suffix);
	}

	frame = reply_event(sub, sub_len, "{\"kind\":1}", 10, &len);
	{
		cJSON *arr = parse_frame(frame, 3, 1, sub);

		ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 2), "kind")->valueint,
				 1);
		cJSON_Delete(arr);
	}
	expect_escaped_frame(frame, len, "[\"EVENT\",", esc, ",{\"kind\":1}]");

	frame = reply_event_head(sub, sub_len, &len);
	expect_escaped_frame(frame, len, "[\"EVENT\",", esc, ",");

	frame = reply_notice(sub, &len);
	cJSON_Delete(parse_frame(frame, 2, 1, sub));
	expect_escaped_frame(frame, len, "[\"NOTICE\",", esc, "]");

	frame = reply_ok(id, false, sub, &len);
	cJSON_Delete(parse_frame(frame, 4, 3, sub));
	free(frame);
}
END_TEST

/* Every control character, alone in an id: escaped, and parsed back. */
START_TEST(test_every_control_character)
{
	static const char short_form[] = {
		['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r'
	};
	char sub[2] = { 0, 0 }, want[32];
	size_t len = 0;

	for (int c = 1; c < 0x20; c++) {
		char *frame;
		int n;

		sub[0] = (char)c;
		if (c < (int)sizeof(short_form) && short_form[c])
			n = snprintf(want, sizeof(want), "[\"EOSE\",\"\\%c\"]", short_form[c]);
		else
			n = snprintf(want, sizeof(want), "[\"EOSE\",\"\\u%04x\"]", c);
		frame = reply_eose(sub, 1, &len);
		cJSON_Delete(parse_frame(frame, 2, 1, sub));
		expect_frame(frame, len, want, (size_t)n);
	}
}
END_TEST

/* The longest id a client may use (64 characters) in multi-byte UTF-8. */
START_TEST(test_long_unicode_sub_id)
{
	char sub[64 * 4 + 1] = "";
	size_t len = 0;
	char *frame;

	for (int i = 0; i < 64; i++)
		strcat(sub, "\xf0\x9f\x98\x80");
	frame = reply_eose(sub, strlen(sub), &len);
	ck_assert_uint_eq(len, strlen("[\"EOSE\",\"\"]") + 256);
	cJSON_Delete(parse_frame(frame, 2, 1, sub));
	free(frame);
}
END_TEST

static Suite *reply_suite(void)
{
	Suite *s = suite_create("reply");
	TCase *tc = tcase_create("reply");

	tcase_add_test(tc, test_ok);
	tcase_add_test(tc, test_notice);
	tcase_add_test(tc, test_closed_eose);
	tcase_add_test(tc, test_event);
	tcase_add_loop_test(tc, test_sub_id_escaping, 0, (int)NSUB_IDS);
	tcase_add_test(tc, test_every_control_character);
	tcase_add_test(tc, test_long_unicode_sub_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(reply_suite());
}
