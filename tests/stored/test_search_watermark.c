/*
 * test_search_watermark.c - checks stored/search_watermark.c alone: what a
 * searcher is told, what it waits for, the lag it reports, and when a
 * commit wakes the indexer.  The indexer's side is played by the test (it
 * sets indexed, ready and wake_lag under the lock as search_index.c does);
 * a thread waiting on the work condition counts the wake-ups.
 */
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "../../stored/search_watermark.h"
#include "../support/suite.h"

static struct search_watermark wm;

static void setup(void)
{
	ck_assert_int_eq(search_watermark_init(&wm), 0);
}

static void teardown(void)
{
	search_watermark_destroy(&wm);
}

/* The indexer's half, as search_index.c publishes it. */
static void indexer_reaches(int64_t indexed, int64_t wake_lag)
{
	pthread_mutex_lock(&wm.lock);
	wm.indexed = indexed;
	wm.ready = true;
	wm.wake_lag = wake_lag;
	pthread_cond_broadcast(&wm.advanced);
	pthread_mutex_unlock(&wm.lock);
}

/* Without an indexer (search = 0, or it has stopped) nothing waits. */
START_TEST(no_indexer_nothing_waits)
{
	int64_t seq = 0;

	search_watermark_committed(&wm, 5);
	ck_assert(search_watermark_want(&wm, &seq));
	ck_assert_int_eq(seq, 5); /* 0 means what is committed now */
	ck_assert(search_watermark_wait(&wm, 5, 0));
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
}
END_TEST

START_TEST(a_searcher_wants_what_is_committed)
{
	int64_t seq = 0;

	indexer_reaches(3, 100);
	search_watermark_committed(&wm, 7);
	ck_assert_int_eq(search_watermark_lag(&wm), 4);
	ck_assert(!search_watermark_want(&wm, &seq));
	ck_assert_int_eq(seq, 7);
	ck_assert_int_eq(wm.wanted, 7);
	ck_assert(!search_watermark_wait(&wm, 7, 10)); /* nobody indexes */
	indexer_reaches(7, 100);
	ck_assert(search_watermark_wait(&wm, 7, 0));
	seq = 6;
	ck_assert(search_watermark_want(&wm, &seq)); /* already covered */
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	search_watermark_committed(&wm, 6); /* older than what is known: ignored */
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
}
END_TEST

/* A thread that counts the work signals the watermark sends.  It sets
 * waiting, under the lock, each time it is about to wait again. */
static int woken;
static bool counting, waiting, stop_counting;

static void *count_work(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wm.lock);
	counting = true;
	while (!stop_counting) {
		waiting = true;
		pthread_cond_broadcast(&wm.advanced);
		pthread_cond_wait(&wm.work, &wm.lock);
		waiting = false;
		woken++;
	}
	pthread_mutex_unlock(&wm.lock);
	return NULL;
}

/* The wake-ups counted once at least n have been and the counter waits
 * again (so the next signal finds it waiting, not lost), or after 30 s.
 * A further 20 ms lets a stray wake-up show.  A busy machine can only
 * make the count late, and the wait is for the count, not for a time. */
static int wakeups_after(int n)
{
	struct timespec tick = { 0, 1000000L }, settle = { 0, 20 * 1000000L };
	int got;

	for (int i = 0; i < 30000; i++) {
		pthread_mutex_lock(&wm.lock);
		bool there = woken >= n && waiting;
		pthread_mutex_unlock(&wm.lock);
		if (there)
			break;
		nanosleep(&tick, NULL);
	}
	nanosleep(&settle, NULL);
	pthread_mutex_lock(&wm.lock);
	got = woken;
	pthread_mutex_unlock(&wm.lock);
	return got;
}

/* The writer wakes the indexer for the first event it has not indexed and
 * for a full batch, not for every commit in between; a searcher that needs
 * more wakes it too. */
/* await is want and wait together: at once when covered, false after the timeout otherwise. */
START_TEST(await_gives_up_after_its_timeout)
{
	indexer_reaches(3, 100);
	search_watermark_committed(&wm, 7);
	ck_assert(search_watermark_await(&wm, 3, 0));
	ck_assert(!search_watermark_await(&wm, 0, 10));
	pthread_mutex_lock(&wm.lock);
	ck_assert_int_eq(wm.wanted, 7);
	pthread_mutex_unlock(&wm.lock);
	indexer_reaches(7, 100);
	ck_assert(search_watermark_await(&wm, 0, 10));
}
END_TEST

START_TEST(commits_wake_the_indexer_only_when_it_has_a_reason)
{
	pthread_t t;
	int64_t seq = 0;

	indexer_reaches(10, 4);
	ck_assert_int_eq(pthread_create(&t, NULL, count_work, NULL), 0);
	pthread_mutex_lock(&wm.lock);
	while (!counting || !waiting)
		pthread_cond_wait(&wm.advanced, &wm.lock);
	pthread_mutex_unlock(&wm.lock);

	search_watermark_committed(&wm, 11); /* the first pending event */
	ck_assert_int_eq(wakeups_after(1), 1);
	ck_assert_int_gt(wm.pending_since_ms, 0);
	search_watermark_committed(&wm, 12);
	search_watermark_committed(&wm, 13);
	ck_assert_int_eq(wakeups_after(1), 1);
	search_watermark_committed(&wm, 14); /* 4 waiting: a full batch */
	ck_assert_int_eq(wakeups_after(2), 2);
	ck_assert(!search_watermark_want(&wm, &seq));
	ck_assert_int_eq(wakeups_after(3), 3);

	pthread_mutex_lock(&wm.lock);
	stop_counting = true;
	pthread_cond_signal(&wm.work);
	pthread_mutex_unlock(&wm.lock);
	pthread_join(t, NULL);
}
END_TEST

static Suite *search_watermark_suite(void)
{
	Suite *s = suite_create("search_watermark");
	TCase *tc = tcase_create("search_watermark");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, no_indexer_nothing_waits);
	tcase_add_test(tc, a_searcher_wants_what_is_committed);
	tcase_add_test(tc, await_gives_up_after_its_timeout);
	tcase_add_test(tc, commits_wake_the_indexer_only_when_it_has_a_reason);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(search_watermark_suite());
}
