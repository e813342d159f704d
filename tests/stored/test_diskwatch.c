/*
 * test_diskwatch.c - checks stored/diskwatch.c: the reserve is the
 * operator's, raised to 1% and capped at a quarter of the file system; a
 * watch that is off, or on a directory that is gone, never reports full;
 * a check records the free space it saw.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../../stored/diskwatch.h"
#include "../support/suite.h"

#define MIB (1024ull * 1024)

START_TEST(the_reserve_is_clamped_to_the_file_system)
{
	/* The operator's 256 MiB on a 100 GiB file system: 1% is more. */
	ck_assert_uint_eq(diskwatch_reserve_bytes(256, 102400 * MIB), 1024 * MIB);
	/* On 20 GiB, 256 MiB is more than 1%. */
	ck_assert_uint_eq(diskwatch_reserve_bytes(256, 20480 * MIB), 256 * MIB);
	/* On 64 MiB, a quarter at most. */
	ck_assert_uint_eq(diskwatch_reserve_bytes(256, 64 * MIB), 16 * MIB);
	ck_assert_uint_eq(diskwatch_reserve_bytes(8, 64 * MIB), 8 * MIB);
}
END_TEST

START_TEST(off_or_gone_is_never_full)
{
	static struct diskwatch zeroed, off, gone;

	ck_assert(!diskwatch_full(&zeroed));
	diskwatch_init(&off, "/", 0);
	ck_assert(!diskwatch_full(&off));
	diskwatch_init(&gone, "/nonexistent/crelay-diskwatch", 1048576);
	ck_assert(!diskwatch_full(&gone));
	ck_assert_uint_eq(atomic_load(&gone.free_bytes), 0);
}
END_TEST

START_TEST(a_check_records_what_it_saw)
{
	static struct diskwatch d;

	diskwatch_init(&d, "/", 1);
	diskwatch_full(&d);
	ck_assert_uint_gt(atomic_load(&d.reserve_bytes), 0);
	diskwatch_count_refused(&d, 3);
	ck_assert_uint_eq(atomic_load(&d.refused), 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("diskwatch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, the_reserve_is_clamped_to_the_file_system);
	tcase_add_test(tc, off_or_gone_is_never_full);
	tcase_add_test(tc, a_check_records_what_it_saw);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
