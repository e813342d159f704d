/*
 * test_confpath.c - checks common/confpath.c: -c wins, then the
 * environment, then the first candidate that exists, then none.
 */
#include <check.h>
#include <stddef.h>

#include "../../common/confpath.h"
#include "../support/suite.h"

static const char *const missing_then_present[] = { "/nonexistent/relay.conf", "/dev/null" };

START_TEST(test_order)
{
	ck_assert_str_eq(confpath_pick("given.conf", "env.conf", missing_then_present, 2),
			 "given.conf");
	ck_assert_str_eq(confpath_pick(NULL, "env.conf", missing_then_present, 2), "env.conf");
	ck_assert_str_eq(confpath_pick(NULL, "", missing_then_present, 2), "/dev/null");
	ck_assert_str_eq(confpath_pick(NULL, NULL, missing_then_present, 2), "/dev/null");
	ck_assert_ptr_null(confpath_pick(NULL, NULL, missing_then_present, 1));
}
END_TEST

static Suite *confpath_suite(void)
{
	Suite *s = suite_create("confpath");
	TCase *tc = tcase_create("confpath");

	tcase_add_test(tc, test_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(confpath_suite());
}
