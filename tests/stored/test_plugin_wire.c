/*
 * test_plugin_wire.c - checks stored/plugin_wire.c: the request line is
 * strfry's format, one line, with the event's JSON as it is and the
 * sourceInfo escaped; answers parse with and without msg, and every
 * malformed answer (not JSON, no id, a short or uppercase id, an unknown
 * action, a msg that is not a string) is refused; a long msg is cut at a
 * character boundary.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../stored/plugin_wire.h"
#include "../support/suite.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

START_TEST(test_request_line)
{
	char json[] = "{\"id\":\"" ID64 "\",\"kind\":1,\"content\":\"a\\nb\"}";
	struct event ev = { .json = json, .json_len = sizeof(json) - 1 };
	struct buf out = BUF_INIT;
	cJSON *obj;

	ck_assert_int_eq(plugin_wire_request(&out, &ev, 1700000000, PLUGIN_SOURCE_IP6, "2001:db8::\"7"), 0);
	ck_assert_uint_gt(out.len, 0);
	ck_assert_int_eq(out.data[out.len - 1], '\n');
	ck_assert_ptr_null(memchr(out.data, '\n', out.len - 1));
	obj = cJSON_ParseWithLength(out.data, out.len);
	ck_assert_ptr_nonnull(obj);
	ck_assert_str_eq(cJSON_GetObjectItem(obj, "type")->valuestring, "new");
	ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "event"), "id")->valuestring, ID64);
	ck_assert_int_eq((int)cJSON_GetObjectItem(obj, "receivedAt")->valuedouble, 1700000000);
	ck_assert_str_eq(cJSON_GetObjectItem(obj, "sourceType")->valuestring, "IP6");
	ck_assert_str_eq(cJSON_GetObjectItem(obj, "sourceInfo")->valuestring, "2001:db8::\"7");
	cJSON_Delete(obj);
	buf_free(&out);
}
END_TEST

START_TEST(test_source_names)
{
	static const char *const names[] = { "IP4", "IP6", "Import", "Stream", "Sync" };
	char json[] = "{}";
	struct event ev = { .json = json, .json_len = 2 };

	for (int i = 0; i < 5; i++) {
		struct buf out = BUF_INIT;
		char want[32];

		snprintf(want, sizeof(want), "\"sourceType\":\"%s\"", names[i]);
		ck_assert_int_eq(plugin_wire_request(&out, &ev, 0, (enum plugin_source)i, ""), 0);
		buf_append_byte(&out, '\0');
		ck_assert_ptr_nonnull(strstr(out.data, want));
		buf_free(&out);
	}
	ck_assert_int_eq(plugin_wire_source_of("203.0.113.5"), PLUGIN_SOURCE_IP4);
	ck_assert_int_eq(plugin_wire_source_of("::1"), PLUGIN_SOURCE_IP6);
}
END_TEST

static int parse(const char *line, struct plugin_answer *a)
{
	return plugin_wire_answer(line, strlen(line), a);
}

START_TEST(test_answers)
{
	struct plugin_answer a;

	ck_assert_int_eq(parse("{\"id\":\"" ID64 "\",\"action\":\"accept\"}", &a), 0);
	ck_assert_int_eq(a.action, PLUGIN_ACCEPT);
	ck_assert_uint_eq(a.id[0], 0x01);
	ck_assert_uint_eq(a.id[31], 0xef);
	ck_assert_str_eq(a.msg, "");
	ck_assert_int_eq(parse("{\"id\":\"" ID64 "\",\"action\":\"reject\",\"msg\":\"no\"}", &a), 0);
	ck_assert_int_eq(a.action, PLUGIN_REJECT);
	ck_assert_str_eq(a.msg, "no");
	ck_assert_int_eq(parse("{\"action\":\"shadowReject\",\"id\":\"" ID64 "\",\"msg\":null}", &a), 0);
	ck_assert_int_eq(a.action, PLUGIN_SHADOW_REJECT);
}
END_TEST

START_TEST(test_bad_answers)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{\"action\":\"accept\"}",
		"{\"id\":\"0123\",\"action\":\"accept\"}",
		"{\"id\":\"" ID64 "0\",\"action\":\"accept\"}",
		"{\"id\":\"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\","
		"\"action\":\"accept\"}",
		"{\"id\":\"" ID64 "\"}",
		"{\"id\":\"" ID64 "\",\"action\":\"Accept\"}",
		"{\"id\":\"" ID64 "\",\"action\":1}",
		"{\"id\":\"" ID64 "\",\"action\":\"reject\",\"msg\":5}",
		"{\"id\":\"" ID64 "\",\"action\":\"accept\"} trailing",
	};
	struct plugin_answer a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(bad[i], &a) == ERR_INVAL, "accepted answer %zu: %s", i, bad[i]);
}
END_TEST

START_TEST(test_long_msg_cut_at_character)
{
	struct buf line = BUF_INIT;
	struct plugin_answer a;

	buf_append_str(&line, "{\"id\":\"" ID64 "\",\"action\":\"reject\",\"msg\":\"");
	for (int i = 0; i < PLUGIN_MSG_MAX; i++)
		buf_append_str(&line, "\xc3\xa9"); /* é, two bytes */
	buf_append_str(&line, "\"}");
	ck_assert_int_eq(plugin_wire_answer(line.data, line.len, &a), 0);
	ck_assert_uint_le(strlen(a.msg), PLUGIN_MSG_MAX);
	ck_assert_uint_eq(strlen(a.msg) % 2, 0);
	buf_free(&line);
}
END_TEST

static Suite *plugin_wire_suite(void)
{
	Suite *s = suite_create("plugin_wire");
	TCase *tc = tcase_create("lines");

	tcase_add_test(tc, test_request_line);
	tcase_add_test(tc, test_source_names);
	tcase_add_test(tc, test_answers);
	tcase_add_test(tc, test_bad_answers);
	tcase_add_test(tc, test_long_msg_cut_at_character);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(plugin_wire_suite());
}
