/*
 * test_heaptrim.c - checks common/heaptrim.c:
 *   - with interval 0 it never trims;
 *   - the first tick only sets the schedule; a tick before the interval has
 *     passed does nothing, one at or after it trims and sets the next one
 *     interval later (from that tick, so a late tick does not cause a run of
 *     trims);
 *   - a trim really gives freed memory back: 64 MiB allocated in 1 KiB
 *     blocks and freed, all but one block at the end that keeps the heap
 *     from shrinking by itself, stays resident until a due tick, and is
 *     gone after it (resident size from /proc/self/statm).  Skipped under
 *     the sanitizers, whose allocators keep their own pools.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/heaptrim.h"
#include "../support/suite.h"

START_TEST(never_with_interval_zero)
{
	struct heaptrim t;

	heaptrim_init(&t, 0);
	for (int64_t now = 1; now < 10000000; now += 100000)
		ck_assert_int_eq(heaptrim_tick(&t, now), 0);
	ck_assert_uint_eq(t.trims, 0);
}
END_TEST

START_TEST(trims_once_per_interval)
{
	struct heaptrim t;

	heaptrim_init(&t, 60);
	ck_assert_int_eq(heaptrim_tick(&t, 1000), 0); /* schedules 61000 */
	ck_assert_int_eq(heaptrim_tick(&t, 2000), 0);
	ck_assert_int_eq(heaptrim_tick(&t, 60999), 0);
	ck_assert_int_eq(heaptrim_tick(&t, 61000), 1);
	ck_assert_uint_eq(t.trims, 1);
	ck_assert_int_ge(t.last_us, 0);
	ck_assert_int_eq(heaptrim_tick(&t, 62000), 0);
	/* Late (a stalled thread): one trim, then a full interval again. */
	ck_assert_int_eq(heaptrim_tick(&t, 500000), 1);
	ck_assert_int_eq(heaptrim_tick(&t, 500001), 0);
	ck_assert_int_eq(heaptrim_tick(&t, 559999), 0);
	ck_assert_int_eq(heaptrim_tick(&t, 560000), 1);
	ck_assert_uint_eq(t.trims, 3);
}
END_TEST

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#else
#define UNDER_SANITIZER 0
#endif

#define BLOCKS (64 * 1024)
#define BLOCK_BYTES 1024

/* Resident size of this process in KiB. */
static long resident_kb(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld %ld", &size, &resident), 2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

START_TEST(gives_freed_memory_back)
{
	static char *blocks[BLOCKS];
	struct heaptrim t;
	long before, after;

	if (UNDER_SANITIZER)
		return;
	for (int i = 0; i < BLOCKS; i++) {
		blocks[i] = malloc(BLOCK_BYTES);
		ck_assert_ptr_nonnull(blocks[i]);
		memset(blocks[i], 0x5a, BLOCK_BYTES); /* resident */
	}
	for (int i = 0; i < BLOCKS - 1; i++)
		free(blocks[i]);
	before = resident_kb();
	heaptrim_init(&t, 1);
	ck_assert_int_eq(heaptrim_tick(&t, 5000), 0);
	ck_assert_int_eq(resident_kb() > before - 16 * 1024, 1); /* nothing yet */
	ck_assert_int_eq(heaptrim_tick(&t, 6000), 1);
	after = resident_kb();
	/* 64 MiB were freed; at least 48 MiB of it must have left. */
	ck_assert_msg(after < before - 48 * 1024, "resident %ld KiB before the trim, %ld after",
		      before, after);
	free(blocks[BLOCKS - 1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("heaptrim");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, never_with_interval_zero);
	tcase_add_test(tc, trims_once_per_interval);
	tcase_add_test(tc, gives_freed_memory_back);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
