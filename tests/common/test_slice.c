/*
 * test_slice.c - checks common/slice.c: a thread's slice request keeps its
 * nice value, 0 changes nothing, and the by-name form reaches exactly the
 * threads whose names start with the prefix.  The slice itself is read
 * back where the kernel has custom slices (Linux 6.12 and later); older
 * kernels accept the request and report no slice, which is checked too.
 */
#include <check.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../../common/prio.h"
#include "../../common/slice.h"
#include "../support/suite.h"

static pid_t this_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Linux 6.12 brought sched_attr::sched_runtime to the fair class. */
static bool kernel_has_custom_slices(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	ck_assert_int_eq(uname(&u), 0);
	sscanf(u.release, "%d.%d", &major, &minor);
	return major > 6 || (major == 6 && minor >= 12);
}

static void expect_slice(pid_t tid, uint64_t ns)
{
	if (kernel_has_custom_slices())
		ck_assert_uint_eq(slice_of_thread(tid), ns);
	else
		ck_assert_uint_eq(slice_of_thread(tid), 0);
}

struct seen {
	int nice_after;
	uint64_t slice_before, slice_after_zero;
	pid_t tid;
};

static void *set_nice_then_slice(void *arg)
{
	struct seen *s = arg;

	s->tid = this_tid();
	ck_assert_int_eq(prio_set_this_thread(7), 0);
	s->slice_before = slice_of_thread(s->tid);
	ck_assert_int_eq(slice_set_this_thread(0), 0);
	s->slice_after_zero = slice_of_thread(s->tid);
	ck_assert_int_eq(slice_set_this_thread(300), 0);
	s->nice_after = prio_of_this_thread();
	expect_slice(s->tid, 300000);
	return NULL;
}

START_TEST(this_thread_keeps_its_nice_value)
{
	struct seen s = { 0 };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, set_nice_then_slice, &s), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(s.nice_after, 7);
	ck_assert_uint_eq(s.slice_after_zero, s.slice_before);
}
END_TEST

/* Threads that wait, named as the test says, until released. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int ready;
static bool release;

struct named {
	const char *name;
	pid_t tid;
	pthread_t thread;
};

static void *wait_named(void *arg)
{
	struct named *n = arg;

	pthread_setname_np(pthread_self(), n->name);
	pthread_mutex_lock(&lock);
	n->tid = this_tid();
	ready++;
	pthread_cond_broadcast(&changed);
	while (!release)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

START_TEST(by_name_reaches_only_the_prefix)
{
	struct named threads[] = { { .name = "sltest:a" }, { .name = "sltest:b" }, { .name = "other" } };
	uint64_t other_before;

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&threads[i].thread, NULL, wait_named, &threads[i]), 0);
	pthread_mutex_lock(&lock);
	while (ready < 3)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	other_before = slice_of_thread(threads[2].tid);

	ck_assert_int_eq(slice_set_threads_named("sltest:", 200), 2);
	expect_slice(threads[0].tid, 200000);
	expect_slice(threads[1].tid, 200000);
	ck_assert_uint_eq(slice_of_thread(threads[2].tid), other_before);
	ck_assert_int_eq(slice_set_threads_named("nobody:", 200), 0);

	pthread_mutex_lock(&lock);
	release = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i].thread, NULL);
}
END_TEST

/* Like nng's: runs a while under the process's name, then names itself. */
static void *name_itself_late(void *arg)
{
	struct named *n = arg;
	struct timespec late = { 0, 150 * 1000000L };

	n->tid = this_tid();
	nanosleep(&late, NULL);
	return wait_named(arg);
}

/* A thread started just before the call and not yet named is waited for,
 * not missed (the sanitizer run once missed an nng thread this way). */
START_TEST(by_name_waits_for_a_thread_not_named_yet)
{
	struct named late = { .name = "sltest:late" };

	ck_assert_int_eq(pthread_create(&late.thread, NULL, name_itself_late, &late), 0);
	ck_assert_int_eq(slice_set_threads_named("sltest:", 200), 1);
	pthread_mutex_lock(&lock); /* late.tid, as wait_named() stored it under the lock */
	while (ready < 1)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	expect_slice(late.tid, 200000);

	pthread_mutex_lock(&lock);
	release = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	pthread_join(late.thread, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slice");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, this_thread_keeps_its_nice_value);
	tcase_add_test(tc, by_name_reaches_only_the_prefix);
	tcase_add_test(tc, by_name_waits_for_a_thread_not_named_yet);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
