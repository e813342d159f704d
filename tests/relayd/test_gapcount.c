/*
 * test_gapcount.c - checks relayd/gapcount.c: deliveries lost in the middle
 * of a count, at its start (the case that went uncounted before: a worker
 * stopped until its first deliveries were dropped), and that deliveries
 * stamped with an earlier HELLO's epoch neither count nor disturb the
 * current count.  A random run of drops is checked against the drops made.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../relayd/gapcount.h"
#include "../support/suite.h"

START_TEST(nothing_lost)
{
	struct gapcount g = { 0 };

	gapcount_restart(&g, 7);
	for (uint64_t seq = 1; seq <= 1000; seq++)
		ck_assert_uint_eq(gapcount_take(&g, 7, seq), 0);
}
END_TEST

START_TEST(lost_in_the_middle)
{
	struct gapcount g = { 0 };

	gapcount_restart(&g, 7);
	ck_assert_uint_eq(gapcount_take(&g, 7, 1), 0);
	ck_assert_uint_eq(gapcount_take(&g, 7, 2), 0);
	ck_assert_uint_eq(gapcount_take(&g, 7, 10), 7);
	ck_assert_uint_eq(gapcount_take(&g, 7, 11), 0);
}
END_TEST

START_TEST(lost_at_the_start)
{
	struct gapcount g = { 0 };

	gapcount_restart(&g, 7);
	ck_assert_uint_eq(gapcount_take(&g, 7, 1221), 1220);
	ck_assert_uint_eq(gapcount_take(&g, 7, 1222), 0);
}
END_TEST

START_TEST(earlier_epoch_is_not_counted)
{
	struct gapcount g = { 0 };

	gapcount_restart(&g, 7);
	ck_assert_uint_eq(gapcount_take(&g, 7, 1), 0);
	/* The worker sent a new HELLO (8); stored had not taken it yet. */
	gapcount_restart(&g, 8);
	ck_assert_uint_eq(gapcount_take(&g, 7, 5000), 0);
	ck_assert_uint_eq(gapcount_take(&g, 7, 5001), 0);
	ck_assert_uint_eq(gapcount_take(&g, 8, 1), 0);
	ck_assert_uint_eq(gapcount_take(&g, 8, 3), 1);
	/* A straggler of the old epoch leaves the new count where it was. */
	ck_assert_uint_eq(gapcount_take(&g, 7, 5002), 0);
	ck_assert_uint_eq(gapcount_take(&g, 8, 4), 0);
}
END_TEST

START_TEST(random_drops)
{
	struct gapcount g = { 0 };
	uint64_t dropped = 0, counted = 0, seq;

	srand(11);
	gapcount_restart(&g, 3);
	for (seq = 1; seq <= 200000; seq++) {
		if (rand() % 4 == 0) {
			dropped++;
			continue;
		}
		counted += gapcount_take(&g, 3, seq);
	}
	/* Drops after the last delivery taken show only with the next one. */
	counted += gapcount_take(&g, 3, seq);
	ck_assert_uint_eq(counted, dropped);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gapcount");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, nothing_lost);
	tcase_add_test(tc, lost_in_the_middle);
	tcase_add_test(tc, lost_at_the_start);
	tcase_add_test(tc, earlier_epoch_is_not_counted);
	tcase_add_test(tc, random_drops);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
