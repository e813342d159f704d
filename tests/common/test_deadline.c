/*
 * test_deadline.c - checks common/deadline.c: the deadline is the clock's
 * now plus the timeout, with tv_nsec carried into tv_sec, on either clock.
 * "now" is read just before and just after, so each expectation is a range
 * that a wrong sum (a lost carry, seconds taken as milliseconds) misses.
 * deadline_cond_init()'s condition variable waits until such a monotonic
 * deadline, not less; deadline_now_ms() and deadline_now_us() read that
 * clock in milliseconds and microseconds.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "../../common/deadline.h"
#include "../support/suite.h"

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void check_deadline(clockid_t clock, int timeout_ms)
{
	struct timespec before, d, after;

	clock_gettime(clock, &before);
	deadline_after_ms(&d, clock, timeout_ms);
	clock_gettime(clock, &after);
	ck_assert_int_ge(d.tv_nsec, 0);
	ck_assert_int_lt(d.tv_nsec, 1000000000L);
	ck_assert_int_ge(ns_of(&d), ns_of(&before) + (int64_t)timeout_ms * 1000000);
	ck_assert_int_le(ns_of(&d), ns_of(&after) + (int64_t)timeout_ms * 1000000);
}

static const int timeouts_ms[] = { 0, 1, 999, 1000, 1001, 2500, 3000, 600000 };
#define NTIMEOUTS ((int)(sizeof(timeouts_ms) / sizeof(timeouts_ms[0])))

START_TEST(monotonic)
{
	check_deadline(CLOCK_MONOTONIC, timeouts_ms[_i]);
}
END_TEST

START_TEST(realtime)
{
	check_deadline(CLOCK_REALTIME, timeouts_ms[_i]);
}
END_TEST

/* Every sub-second part, so some sum crosses a second whatever now is. */
START_TEST(carry_for_every_millisecond)
{
	for (int ms = 0; ms < 2000; ms++)
		check_deadline(CLOCK_MONOTONIC, ms);
}
END_TEST

/* A wait on deadline_cond_init()'s condition variable ends at a monotonic
 * deadline: on a CLOCK_REALTIME one, a monotonic time (seconds since boot)
 * would lie decades in the past and the wait would end at once. */
START_TEST(cond_waits_in_monotonic_time)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cond;
	struct timespec until, before, after;
	int64_t waited_ns;

	ck_assert_int_eq(deadline_cond_init(&cond), 0);
	clock_gettime(CLOCK_MONOTONIC, &before);
	deadline_after_ms(&until, CLOCK_MONOTONIC, 100);
	pthread_mutex_lock(&lock);
	ck_assert_int_eq(pthread_cond_timedwait(&cond, &lock, &until), ETIMEDOUT);
	pthread_mutex_unlock(&lock);
	clock_gettime(CLOCK_MONOTONIC, &after);
	waited_ns = ns_of(&after) - ns_of(&before);
	ck_assert_int_ge(waited_ns, 100 * 1000000LL);
	ck_assert_int_lt(waited_ns, 2000 * 1000000LL);
	pthread_cond_destroy(&cond);
}
END_TEST

/* deadline_now_ms() is CLOCK_MONOTONIC in milliseconds: between two
 * readings of that clock, and it moves with a sleep. */
START_TEST(now_ms_is_the_monotonic_clock)
{
	struct timespec before, after, nap = { 0, 30 * 1000000L };
	int64_t now, later;

	clock_gettime(CLOCK_MONOTONIC, &before);
	now = deadline_now_ms();
	clock_gettime(CLOCK_MONOTONIC, &after);
	ck_assert_int_ge(now, ns_of(&before) / 1000000);
	ck_assert_int_le(now, ns_of(&after) / 1000000);
	nanosleep(&nap, NULL);
	later = deadline_now_ms();
	ck_assert_int_ge(later - now, 30);
	ck_assert_int_lt(later - now, 5000);
}
END_TEST

/* deadline_now_us() is the same clock in microseconds. */
START_TEST(now_us_is_the_monotonic_clock)
{
	struct timespec before, after, nap = { 0, 2 * 1000000L };
	int64_t now, later;

	clock_gettime(CLOCK_MONOTONIC, &before);
	now = deadline_now_us();
	clock_gettime(CLOCK_MONOTONIC, &after);
	ck_assert_int_ge(now, ns_of(&before) / 1000);
	ck_assert_int_le(now, ns_of(&after) / 1000);
	nanosleep(&nap, NULL);
	later = deadline_now_us();
	ck_assert_int_ge(later - now, 2000);
	ck_assert_int_lt(later - now, 5000000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deadline");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, monotonic, 0, NTIMEOUTS);
	tcase_add_loop_test(tc, realtime, 0, NTIMEOUTS);
	tcase_add_test(tc, carry_for_every_millisecond);
	tcase_add_test(tc, cond_waits_in_monotonic_time);
	tcase_add_test(tc, now_ms_is_the_monotonic_clock);
	tcase_add_test(tc, now_us_is_the_monotonic_clock);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
