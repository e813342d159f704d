/*
 * test_prio.c - checks common/prio.c: a thread that lowers its priority
 * changes its own nice value only (the thread that created it keeps its
 * own), 0 changes nothing, and a thread it creates afterwards inherits the
 * lower priority (how the writer's value would reach helpers it starts).
 */
#include <check.h>
#include <pthread.h>

#include "../../common/prio.h"
#include "../support/suite.h"

struct seen {
	int nice_to_set;
	int own, child;
};

static void *report_child(void *arg)
{
	*(int *)arg = prio_of_this_thread();
	return NULL;
}

static void *lower_and_report(void *arg)
{
	struct seen *s = arg;
	pthread_t child;

	ck_assert_int_eq(prio_set_this_thread(s->nice_to_set), 0);
	s->own = prio_of_this_thread();
	ck_assert_int_eq(pthread_create(&child, NULL, report_child, &s->child), 0);
	pthread_join(child, NULL);
	return NULL;
}

static struct seen run_thread(int nice)
{
	struct seen s = { nice, -100, -100 };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, lower_and_report, &s), 0);
	pthread_join(t, NULL);
	return s;
}

START_TEST(lowers_only_the_calling_thread)
{
	int before = prio_of_this_thread();
	struct seen s;

	ck_assert_int_lt(before, 7); /* the test itself must not run niced */
	s = run_thread(7);
	ck_assert_int_eq(s.own, 7);
	ck_assert_int_eq(s.child, 7);
	ck_assert_int_eq(prio_of_this_thread(), before);
}
END_TEST

START_TEST(zero_changes_nothing)
{
	int before = prio_of_this_thread();
	struct seen s = run_thread(0);

	ck_assert_int_eq(s.own, before);
	ck_assert_int_eq(s.child, before);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prio");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, lowers_only_the_calling_thread);
	tcase_add_test(tc, zero_changes_nothing);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
