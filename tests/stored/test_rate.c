/*
 * test_rate.c - checks stored/rate.c: the growth per second over a window,
 * with a ring younger than the window, older than it, wrapped several
 * times, and the degenerate cases (no sample, no time passed, a counter
 * that went backwards, samples out of order).
 */
#include <check.h>
#include <stdlib.h>

#include "../../stored/rate.h"
#include "../support/suite.h"

#define EPS 1e-9

START_TEST(test_empty)
{
	struct rate r;

	rate_init(&r);
	ck_assert_double_eq_tol(rate_per_second(&r, 10, 100, 10), 0, EPS);
}
END_TEST

/* Samples only 3 s old: the rate is measured over those 3 s. */
START_TEST(test_younger_than_window)
{
	struct rate r;

	rate_init(&r);
	rate_add(&r, 100, 1000);
	rate_add(&r, 101, 1010);
	rate_add(&r, 102, 1020);
	ck_assert_double_eq_tol(rate_per_second(&r, 103, 1060, 10), 20, EPS);
}
END_TEST

/* One sample a second at 5 per second, then a burst: a 10 s window sees
 * the sample at now - 10 exactly. */
START_TEST(test_window)
{
	struct rate r;
	uint64_t v = 0;

	rate_init(&r);
	for (int t = 0; t <= 100; t++, v += 5)
		rate_add(&r, t, v);
	/* v is now 505 at t = 101 (not yet sampled); the sample at 91 is 455 */
	ck_assert_double_eq_tol(rate_per_second(&r, 101, v, 10), 5, EPS);
	ck_assert_double_eq_tol(rate_per_second(&r, 101, v + 100, 10), 15, EPS);
	/* a window longer than the ring reaches back to the oldest sample */
	ck_assert_double_eq_tol(rate_per_second(&r, 101, v, 1000), 5, EPS);
}
END_TEST

/* Irregular sampling: the newest sample at least a window old is used. */
START_TEST(test_irregular)
{
	struct rate r;

	rate_init(&r);
	rate_add(&r, 0, 0);
	rate_add(&r, 4, 40);
	rate_add(&r, 8.5, 100);
	rate_add(&r, 12, 200);
	/* now 20, window 10: samples at or before 10 are 0, 4, 8.5 -> 8.5 */
	ck_assert_double_eq_tol(rate_per_second(&r, 20, 270, 10), 170 / 11.5, EPS);
}
END_TEST

START_TEST(test_degenerate)
{
	struct rate r;

	rate_init(&r);
	rate_add(&r, 5, 50);
	ck_assert_double_eq_tol(rate_per_second(&r, 5, 60, 10), 0, EPS); /* no time */
	ck_assert_double_eq_tol(rate_per_second(&r, 6, 40, 10), 0, EPS); /* backwards */
	rate_add(&r, 4, 0);                                                /* out of order */
	rate_add(&r, 5, 0);                                                /* same time */
	ck_assert_uint_eq(r.n, 1);
	ck_assert_double_eq_tol(rate_per_second(&r, 7, 70, 10), 10, EPS);
}
END_TEST

static Suite *rate_suite(void)
{
	Suite *s = suite_create("rate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_younger_than_window);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_irregular);
	tcase_add_test(tc, test_degenerate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(rate_suite());
}
