/*
 * test_admin.c - checks stored/admin.c, the admin socket's dispatch.
 *
 * Every command of proto/admin.h has a handler.  A request of another
 * version, or with a "v" that is no version, is answered with an error
 * naming the version stored speaks, before any handler runs.  A request
 * without "v" (a JSON object or a bare word, as README.md's nngcat lines
 * send) passes the version check: an unknown command then says so.  A
 * \u0000 in a request is kept, not a cut.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../common/json.h"
#include "../../proto/admin.h"
#include "../../stored/admin_cmds.h"
#include "../support/suite.h"

START_TEST(test_every_command_has_a_handler)
{
	for (int cmd = 0; cmd < ADMIN_CMD_LIMIT; cmd++)
		ck_assert_msg(admin__handler(cmd) != NULL, "no handler for %s",
			      admin_cmd_name(cmd));
	ck_assert_ptr_null(admin__handler(-1));
	ck_assert_ptr_null(admin__handler(ADMIN_CMD_LIMIT));
}
END_TEST

/* The answer's "error" text, asserted present; the caller frees answer. */
static const char *error_of(const cJSON *answer)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(answer, ADMIN_F_ERROR);

	ck_assert_msg(cJSON_IsString(e), "no error in the answer");
	return e->valuestring;
}

static cJSON *reply_to(const char *request)
{
	/* No handler may run for these requests: none gets a struct admin. */
	cJSON *answer = admin__reply(NULL, request, strlen(request));

	ck_assert_ptr_nonnull(answer);
	return answer;
}

static const char *const other_versions[] = {
	"{\"cmd\":\"stats\",\"v\":2}",
	"{\"cmd\":\"reload\",\"v\":0}",
	"{\"cmd\":\"stats\",\"v\":\"1\"}",
	"{\"cmd\":\"bogus\",\"v\":1.5}",
};

START_TEST(test_other_version_refused)
{
	cJSON *answer = reply_to(other_versions[_i]);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(answer, ADMIN_F_V);
	const char *why = error_of(answer);

	ck_assert_msg(strstr(why, "version") || strstr(why, "\"v\""), "%s", why);
	ck_assert(cJSON_IsNumber(v));
	ck_assert_int_eq(v->valueint, ADMIN_VERSION);
	cJSON_Delete(answer);
}
END_TEST

static const char *const version_one[] = {
	"bogus",
	"bogus\n",
	"{\"cmd\":\"bogus\"}",
	"{\"cmd\":\"bogus\",\"v\":1}",
};

START_TEST(test_version_one_reaches_dispatch)
{
	cJSON *answer = reply_to(version_one[_i]);

	ck_assert_ptr_nonnull(strstr(error_of(answer), "unknown command 'bogus'"));
	ck_assert_ptr_nonnull(strstr(error_of(answer), " stats "));
	ck_assert(!cJSON_HasObjectItem(answer, ADMIN_F_V));
	cJSON_Delete(answer);
}
END_TEST

/* A request is read whole, U+0000 included (json.h): "stats\u0000x" is no
 * command, and the answer names it as sent. */
START_TEST(test_nul_escape_kept)
{
	cJSON *answer = reply_to("{\"cmd\":\"stats\\u0000x\"}");
	char *text = json_print(answer, false);

	ck_assert_ptr_nonnull(strstr(error_of(answer), "unknown command"));
	ck_assert_ptr_nonnull(strstr(text, "'stats\\u0000x'"));
	free(text);
	cJSON_Delete(answer);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("admin");
	TCase *tc = tcase_create("dispatch");

	tcase_add_test(tc, test_every_command_has_a_handler);
	tcase_add_loop_test(tc, test_other_version_refused, 0,
			    (int)(sizeof(other_versions) / sizeof(other_versions[0])));
	tcase_add_loop_test(tc, test_version_one_reaches_dispatch, 0,
			    (int)(sizeof(version_one) / sizeof(version_one[0])));
	tcase_add_test(tc, test_nul_escape_kept);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
