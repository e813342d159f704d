/*
 * test_procstat.c - checks common/procstat.c against what the test process
 * knows of itself: memory it touched is resident, CPU it burnt is counted,
 * a descriptor it opened is counted, and it started before now and after
 * the time a parent noted before forking it.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/procstat.h"
#include "../support/suite.h"

START_TEST(test_memory_and_fds)
{
	struct procstat before, after;
	size_t len = 64u << 20;
	char *block;
	int fd;

	ck_assert_int_eq(procstat_read(&before), 0);
	block = malloc(len);
	ck_assert_ptr_nonnull(block);
	memset(block, 1, len);
	__asm__ volatile("" : : "r"(block) : "memory"); /* keep the stores */
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(procstat_read(&after), 0);
	ck_assert_uint_ge(after.rss_bytes, before.rss_bytes + len / 2);
	ck_assert_uint_eq(after.open_fds, before.open_fds + 1);
	ck_assert_uint_ge(after.max_fds, after.open_fds);
	close(fd);
	free(block);
}
END_TEST

START_TEST(test_cpu_and_start)
{
	struct procstat p;
	volatile uint64_t x = 0;
	clock_t until = clock() + CLOCKS_PER_SEC / 20;

	while (clock() < until)
		x++;
	ck_assert_int_eq(procstat_read(&p), 0);
	ck_assert_uint_ge(p.cpu_us, 50000);
	/* check forks each test: this process began within the suite's run. */
	ck_assert_uint_le(p.start_time, (uint64_t)time(NULL));
	ck_assert_uint_ge(p.start_time + 600, (uint64_t)time(NULL));
}
END_TEST

static Suite *procstat_suite(void)
{
	Suite *s = suite_create("procstat");
	TCase *tc = tcase_create("procstat");

	tcase_add_test(tc, test_memory_and_fds);
	tcase_add_test(tc, test_cpu_and_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(procstat_suite());
}
