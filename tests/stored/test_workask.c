/*
 * test_workask.c - checks stored/workask.c: answers of the asked workers
 * are kept until the question ends; a late, unasked, mistyped or second
 * answer is dropped; a worker given up or silent is named by
 * workask_was_asked() without an answer; the wait ends once every worker
 * answered, or at its deadline.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../../common/deadline.h"
#include "../../common/err.h"
#include "../../stored/workask.h"
#include "../support/suite.h"

#define TYPE 23
#define OTHER_TYPE 25

static struct workask q;

static void setup(void)
{
	ck_assert_int_eq(workask_init(&q), 0);
}

static void teardown(void)
{
	workask_end(&q);
}

START_TEST(answers_are_kept_until_the_end)
{
	uint32_t id = workask_begin(&q, TYPE);
	int64_t t0 = deadline_now_ms();
	const struct buf *b;

	ck_assert_uint_ne(id, 0);
	workask_expect(&q, 1);
	workask_expect(&q, 3);
	ck_assert_int_eq(workask_answer(&q, id, 1, TYPE, "one", 3), 0);
	ck_assert_int_eq(workask_answer(&q, id, 3, TYPE, "", 0), 0);
	workask_finish(&q, 60000); /* returns at once: both answered */
	ck_assert_int_lt(deadline_now_ms() - t0, 30000);
	b = workask_answer_of(&q, 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->len, 3);
	ck_assert(memcmp(b->data, "one", 3) == 0);
	ck_assert_uint_eq(workask_answer_of(&q, 3)->len, 0);
	ck_assert(workask_was_asked(&q, 3));
	ck_assert(!workask_was_asked(&q, 2));
	ck_assert_ptr_null(workask_answer_of(&q, 2));
	workask_end(&q);
	ck_assert_ptr_null(workask_answer_of(&q, 1));
	ck_assert(!workask_was_asked(&q, 1));
}
END_TEST

START_TEST(stray_answers_are_dropped)
{
	uint32_t id = workask_begin(&q, TYPE);

	workask_expect(&q, 1);
	workask_expect(&q, 1); /* counted once */
	ck_assert_int_eq(workask_answer(&q, id + 1, 1, TYPE, "x", 1), ERR_NOTFOUND);
	ck_assert_int_eq(workask_answer(&q, 0, 1, TYPE, "x", 1), ERR_NOTFOUND);
	ck_assert_int_eq(workask_answer(&q, id, 2, TYPE, "x", 1), ERR_NOTFOUND);
	ck_assert_int_eq(workask_answer(&q, id, 1, OTHER_TYPE, "x", 1), ERR_NOTFOUND);
	ck_assert_int_eq(workask_answer(&q, id, WORKASK_WORKERS, TYPE, "x", 1), ERR_NOTFOUND);
	ck_assert_int_eq(workask_answer(&q, id, 1, TYPE, "first", 5), 0);
	ck_assert_int_eq(workask_answer(&q, id, 1, TYPE, "second", 6), ERR_NOTFOUND);
	workask_finish(&q, 60000);
	ck_assert_uint_eq(workask_answer_of(&q, 1)->len, 5);
	/* Closed: a late answer finds nothing. */
	ck_assert_int_eq(workask_answer(&q, id, 1, TYPE, "late", 4), ERR_NOTFOUND);
	workask_end(&q);
	ck_assert_uint_ne(workask_begin(&q, TYPE), id); /* a new question, a new id */
}
END_TEST

START_TEST(a_silent_worker_ends_the_wait_at_its_deadline)
{
	uint32_t id = workask_begin(&q, TYPE);
	int64_t t0 = deadline_now_ms();

	workask_expect(&q, 1);
	workask_expect(&q, 2);
	workask_expect(&q, 4);
	workask_give_up(&q, 4); /* its question could not be sent */
	ck_assert_int_eq(workask_answer(&q, id, 4, TYPE, "x", 1), ERR_NOTFOUND);
	ck_assert_int_eq(workask_answer(&q, id, 1, TYPE, "x", 1), 0);
	workask_finish(&q, 200);
	ck_assert_int_ge(deadline_now_ms() - t0, 200);
	ck_assert(workask_was_asked(&q, 2));
	ck_assert_ptr_null(workask_answer_of(&q, 2));
	ck_assert(workask_was_asked(&q, 4));
	ck_assert_ptr_null(workask_answer_of(&q, 4));
	ck_assert_ptr_nonnull(workask_answer_of(&q, 1));
}
END_TEST

/* The rpc thread's side: an answer from another thread ends the wait. */
struct answerer {
	uint32_t id;
};

static void *answer_later(void *arg)
{
	struct answerer *a = arg;

	workask_answer(&q, a->id, 7, TYPE, "late but in time", 16);
	return NULL;
}

START_TEST(an_answer_from_another_thread_ends_the_wait)
{
	struct answerer a = { workask_begin(&q, TYPE) };
	pthread_t t;

	workask_expect(&q, 7);
	ck_assert_int_eq(pthread_create(&t, NULL, answer_later, &a), 0);
	workask_finish(&q, 60000);
	pthread_join(t, NULL);
	ck_assert_ptr_nonnull(workask_answer_of(&q, 7));
	ck_assert_uint_eq(workask_answer_of(&q, 7)->len, 16);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workask");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, answers_are_kept_until_the_end);
	tcase_add_test(tc, stray_answers_are_dropped);
	tcase_add_test(tc, a_silent_worker_ends_the_wait_at_its_deadline);
	tcase_add_test(tc, an_answer_from_another_thread_ends_the_wait);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
