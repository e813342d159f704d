/*
 * test_keepalive.c - when relayd/keepalive.c pings or closes: a ping at
 * ping_interval seconds of silence, a close only more than an interval
 * after an unanswered ping, and both across the 16-bit clock's wrap.
 */
#include <check.h>

#include "../../relayd/keepalive.h"
#include "../support/suite.h"

START_TEST(test_ping_after_interval)
{
	ck_assert_int_eq(keepalive_due(144, 100, false, 45), KEEPALIVE_NONE);
	ck_assert_int_eq(keepalive_due(145, 100, false, 45), KEEPALIVE_PING);
	ck_assert_int_eq(keepalive_due(900, 100, false, 45), KEEPALIVE_PING);
}
END_TEST

START_TEST(test_close_after_unanswered_ping)
{
	ck_assert_int_eq(keepalive_due(145, 100, true, 45), KEEPALIVE_NONE);
	ck_assert_int_eq(keepalive_due(146, 100, true, 45), KEEPALIVE_CLOSE);
	/* One second: the next tick is not enough for an answer's interval. */
	ck_assert_int_eq(keepalive_due(101, 100, true, 1), KEEPALIVE_NONE);
	ck_assert_int_eq(keepalive_due(102, 100, true, 1), KEEPALIVE_CLOSE);
}
END_TEST

START_TEST(test_clock_wraps)
{
	ck_assert_int_eq(keepalive_due(5, 65534, false, 7), KEEPALIVE_PING);
	ck_assert_int_eq(keepalive_due(4, 65534, false, 7), KEEPALIVE_NONE);
	ck_assert_int_eq(keepalive_due(3600, 65535, true, 3600), KEEPALIVE_CLOSE);
}
END_TEST

static Suite *keepalive_suite(void)
{
	Suite *s = suite_create("keepalive");
	TCase *tc = tcase_create("due");

	tcase_add_test(tc, test_ping_after_interval);
	tcase_add_test(tc, test_close_after_unanswered_ping);
	tcase_add_test(tc, test_clock_wraps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(keepalive_suite());
}
