/*
 * test_admin.c - checks proto/admin.c, the admin protocol's command names
 * and version.
 *
 * Every command has one name and finds itself by it; a request's "v" is
 * read as its version, 1 when absent (a bare nngcat word), -1 when it is
 * no integer from 1 to 65535; stamping adds cmd and v only where missing.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../proto/admin.h"
#include "../support/suite.h"

START_TEST(test_names_unique_and_found)
{
	for (int a = 0; a < ADMIN_CMD_LIMIT; a++) {
		ck_assert_ptr_nonnull(admin_cmd_name(a));
		ck_assert_int_eq(admin_cmd_find(admin_cmd_name(a)), a);
		for (int b = a + 1; b < ADMIN_CMD_LIMIT; b++)
			ck_assert_str_ne(admin_cmd_name(a), admin_cmd_name(b));
	}
	ck_assert_str_eq(admin_cmd_name(ADMIN_CMD_STATS), "stats");
	ck_assert_str_eq(admin_cmd_name(ADMIN_CMD_IMPORT), "import");
	ck_assert_ptr_null(admin_cmd_name(-1));
	ck_assert_ptr_null(admin_cmd_name(ADMIN_CMD_LIMIT));
	ck_assert_int_eq(admin_cmd_find("bogus"), -1);
	ck_assert_int_eq(admin_cmd_find(""), -1);
	ck_assert_int_eq(admin_cmd_find("Stats"), -1);
}
END_TEST

static const struct {
	const char *request; /* NULL: a bare word */
	int version;
} version_cases[] = {
	{ NULL, 1 },
	{ "{\"cmd\":\"stats\"}", 1 },
	{ "{\"cmd\":\"stats\",\"v\":1}", 1 },
	{ "{\"cmd\":\"stats\",\"v\":2}", 2 },
	{ "{\"v\":65535}", 65535 },
	{ "{\"v\":0}", -1 },
	{ "{\"v\":-1}", -1 },
	{ "{\"v\":1.5}", -1 },
	{ "{\"v\":65536}", -1 },
	{ "{\"v\":\"1\"}", -1 },
	{ "{\"v\":null}", -1 },
	{ "{\"v\":[1]}", -1 },
};

START_TEST(test_request_version)
{
	cJSON *req = version_cases[_i].request ? cJSON_Parse(version_cases[_i].request) : NULL;

	ck_assert(!version_cases[_i].request || req);
	ck_assert_int_eq(admin_request_version(req), version_cases[_i].version);
	cJSON_Delete(req);
}
END_TEST

START_TEST(test_stamp_adds_what_is_missing)
{
	cJSON *req = cJSON_CreateObject();
	char *text;

	ck_assert_int_eq(admin_request_stamp(req, ADMIN_CMD_DELETE), 0);
	text = cJSON_PrintUnformatted(req);
	ck_assert_str_eq(text, "{\"cmd\":\"delete\",\"v\":1}");
	ck_assert_int_eq(admin_request_version(req), ADMIN_VERSION);
	free(text);
	cJSON_Delete(req);

	req = cJSON_Parse("{\"v\":7,\"cmd\":\"nip86\"}");
	ck_assert_int_eq(admin_request_stamp(req, ADMIN_CMD_STATS), 0);
	text = cJSON_PrintUnformatted(req);
	ck_assert_str_eq(text, "{\"v\":7,\"cmd\":\"nip86\"}");
	free(text);
	cJSON_Delete(req);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("admin");
	TCase *tc = tcase_create("protocol");

	tcase_add_test(tc, test_names_unique_and_found);
	tcase_add_loop_test(tc, test_request_version, 0,
			    (int)(sizeof(version_cases) / sizeof(version_cases[0])));
	tcase_add_test(tc, test_stamp_adds_what_is_missing);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
