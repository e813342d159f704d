/*
 * test_countwait.c - checks relayd/countwait.c: a noted COUNT is taken
 * once (its query id handed over), answers in any order find theirs,
 * draining closes every one still noted in the order sent and leaves none,
 * a COUNT past its deadline is closed once and the others stay (also when
 * the deadlines are out of order), and a random run against a plain list.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../relayd/countwait.h"
#include "../support/suite.h"

START_TEST(a_noted_count_is_taken_once)
{
	struct count_waits c = { 0 };
	struct count_wait w;

	ck_assert_int_eq(count_waits_add(&c, 7, "q1", 2, 1000), 0);
	ck_assert(count_waits_take(&c, 7, &w));
	ck_assert_uint_eq(w.request_id, 7);
	ck_assert_uint_eq(w.sub_id_len, 2);
	ck_assert_str_eq(w.sub_id, "q1");
	free(w.sub_id);
	/* A second answer to the same COUNT (or one closed already) finds
	 * nothing, so its client is not answered twice. */
	ck_assert(!count_waits_take(&c, 7, NULL));
	ck_assert(!count_waits_take(&c, 8, NULL));
	count_waits_free(&c);
}
END_TEST

static void collect(void *arg, const char *sub_id, size_t len)
{
	char *seen = arg;

	strncat(seen, sub_id, len);
	strcat(seen, ",");
}

START_TEST(answers_in_any_order_and_the_rest_are_drained)
{
	struct count_waits c = { 0 };
	char seen[128] = "";
	char id[8];

	for (uint32_t i = 1; i <= 6; i++) {
		snprintf(id, sizeof(id), "c%u", i);
		ck_assert_int_eq(count_waits_add(&c, i, id, strlen(id), 1000), 0);
	}
	ck_assert(count_waits_take(&c, 4, NULL));
	ck_assert(count_waits_take(&c, 1, NULL));
	ck_assert(count_waits_take(&c, 6, NULL));
	count_waits_drain(&c, collect, seen);
	ck_assert_str_eq(seen, "c2,c3,c5,");
	ck_assert_uint_eq(c.n, 0);
	/* Drained means forgotten: a late answer finds nothing. */
	ck_assert(!count_waits_take(&c, 2, NULL));
	/* And the list takes new COUNTs after a drain. */
	ck_assert_int_eq(count_waits_add(&c, 9, "again", 5, 1000), 0);
	ck_assert(count_waits_take(&c, 9, NULL));
	count_waits_free(&c);
}
END_TEST

START_TEST(counts_past_their_deadline_are_closed_and_the_others_stay)
{
	struct count_waits c = { 0 };
	char seen[128] = "";

	/* The third was sent after answer_timeout_ms was lowered: its deadline
	 * is earlier than the second's. */
	ck_assert_int_eq(count_waits_add(&c, 1, "a", 1, 100), 0);
	ck_assert_int_eq(count_waits_add(&c, 2, "b", 1, 300), 0);
	ck_assert_int_eq(count_waits_add(&c, 3, "c", 1, 150), 0);
	ck_assert_int_eq(count_waits_add(&c, 4, "d", 1, 400), 0);
	ck_assert_uint_eq(count_waits_expire(&c, 99, collect, seen), 0);
	ck_assert_str_eq(seen, "");
	ck_assert_uint_eq(count_waits_expire(&c, 150, collect, seen), 2);
	ck_assert_str_eq(seen, "a,c,");
	/* Closed means forgotten: their late answers find nothing, and a
	 * second expiry at the same time closes nothing twice. */
	ck_assert(!count_waits_take(&c, 1, NULL));
	ck_assert(!count_waits_take(&c, 3, NULL));
	ck_assert_uint_eq(count_waits_expire(&c, 150, collect, seen), 0);
	/* The others keep their order and their answers. */
	ck_assert_uint_eq(c.n, 2);
	ck_assert(count_waits_take(&c, 4, NULL));
	ck_assert_uint_eq(count_waits_expire(&c, 1000, collect, seen), 1);
	ck_assert_str_eq(seen, "a,c,b,");
	ck_assert_uint_eq(c.n, 0);
	count_waits_free(&c);
}
END_TEST

START_TEST(random_adds_and_takes_against_a_list)
{
	struct count_waits c = { 0 };
	bool noted[256] = { false };
	uint32_t next = 0;

	srand(11);
	for (int step = 0; step < 20000; step++) {
		if (next < 256 && rand() % 2) {
			char id[16];

			snprintf(id, sizeof(id), "id%u", next);
			ck_assert_int_eq(count_waits_add(&c, next, id, strlen(id), 1000), 0);
			noted[next++] = true;
		} else {
			uint32_t rid = (uint32_t)(rand() % 260);
			struct count_wait w;
			bool want = rid < 256 && noted[rid];

			if (count_waits_take(&c, rid, &w) != want)
				ck_abort_msg("step %d: request %u %s", step, rid,
					     want ? "missed" : "found");
			if (want) {
				char id[16];

				snprintf(id, sizeof(id), "id%u", rid);
				ck_assert_str_eq(w.sub_id, id);
				free(w.sub_id);
				noted[rid] = false;
			}
		}
	}
	count_waits_free(&c);
	ck_assert_uint_eq(c.n, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("countwait");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, a_noted_count_is_taken_once);
	tcase_add_test(tc, answers_in_any_order_and_the_rest_are_drained);
	tcase_add_test(tc, counts_past_their_deadline_are_closed_and_the_others_stay);
	tcase_add_test(tc, random_adds_and_takes_against_a_list);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
