/*
 * test_visible.c - checks stored/visible.c: a wait for a seq already
 * readable returns at once, a wait for a later one returns when the writer
 * advances that far (not before) or false at its time limit, and the mark
 * never moves back.  Also run under TSan (make tsan).
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "../../stored/visible.h"
#include "../support/suite.h"

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

START_TEST(readable_at_once)
{
	struct visible_mark m;

	ck_assert_int_eq(visible_mark_init(&m), 0);
	ck_assert(visible_mark_wait(&m, 0, 0));
	visible_mark_advance(&m, 42);
	ck_assert(visible_mark_wait(&m, 41, 0));
	ck_assert(visible_mark_wait(&m, 42, 0));
	ck_assert(!visible_mark_wait(&m, 43, 0));
	visible_mark_advance(&m, 7); /* an older commit's seq changes nothing */
	ck_assert(visible_mark_wait(&m, 42, 0));
	visible_mark_destroy(&m);
}
END_TEST

START_TEST(gives_up_at_its_limit)
{
	struct visible_mark m;
	int64_t started;

	ck_assert_int_eq(visible_mark_init(&m), 0);
	visible_mark_advance(&m, 10);
	started = now_ms();
	ck_assert(!visible_mark_wait(&m, 11, 150));
	ck_assert_int_ge(now_ms() - started, 150);
	ck_assert_int_lt(now_ms() - started, 2000);
	visible_mark_destroy(&m);
}
END_TEST

struct stepper {
	struct visible_mark *m;
	int64_t upto;
};

/* Advances the mark one seq at a time, 1 ms apart, like commits. */
static void *advance_slowly(void *arg)
{
	struct stepper *st = arg;

	for (int64_t seq = 1; seq <= st->upto; seq++) {
		usleep(1000);
		visible_mark_advance(st->m, seq);
	}
	return NULL;
}

START_TEST(wakes_when_the_writer_gets_there)
{
	struct visible_mark m;
	struct stepper st = { &m, 60 };
	pthread_t writer;

	ck_assert_int_eq(visible_mark_init(&m), 0);
	ck_assert_int_eq(pthread_create(&writer, NULL, advance_slowly, &st), 0);
	for (int64_t want = 5; want <= 60; want += 5) {
		ck_assert(visible_mark_wait(&m, want, 5000));
		ck_assert_int_ge(atomic_load(&m.seq), want);
	}
	pthread_join(writer, NULL);
	ck_assert_int_eq(atomic_load(&m.seq), 60);
	visible_mark_destroy(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("visible");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, readable_at_once);
	tcase_add_test(tc, gives_up_at_its_limit);
	tcase_add_test(tc, wakes_when_the_writer_gets_there);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
