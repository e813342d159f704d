/*
 * test_lostrange.c - checks relayd/lostrange.c: which lost commit ranges a
 * subscription keeps, forgets when answered, asks again after the link to
 * stored went down, and what is left of them once a history or a resume
 * brought part of them; ranges lost while a subscription holds its
 * deliveries join into one, and which commits an asked range brings.  A random run compares the ranges left after a
 * cover with the commits counted one by one: none lost, none extra unless
 * a split had no room.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../relayd/lostrange.h"
#include "../support/suite.h"

/* Whether commit seq is in one of l's unasked ranges. */
static bool unasked_has(const struct lost_ranges *l, uint64_t seq)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!l->r[i].request_id && l->r[i].after < seq && seq < l->r[i].before)
			return true;
	return false;
}

START_TEST(empty_ranges_are_not_kept)
{
	struct lost_ranges l = { 0 };

	ck_assert(lost_ranges_add(&l, 5, 6, false)); /* no commit between 5 and 6 */
	ck_assert(lost_ranges_add(&l, 9, 3, false));
	ck_assert_uint_eq(l.n, 0);
	ck_assert(lost_ranges_add(&l, 5, 7, false));
	ck_assert_uint_eq(l.n, 1);
	ck_assert(unasked_has(&l, 6));
	ck_assert(!unasked_has(&l, 5) && !unasked_has(&l, 7));
	lost_ranges_free(&l);
}
END_TEST

START_TEST(a_full_set_joins_the_newest_unasked_range)
{
	struct lost_ranges l = { 0 };

	for (uint64_t i = 0; i < LOST_RANGES_MAX; i++)
		ck_assert(lost_ranges_add(&l, i * 10, i * 10 + 5, false));
	ck_assert(lost_ranges_add(&l, 5000, 6000, false));
	ck_assert_uint_eq(l.n, LOST_RANGES_MAX);
	/* The newest range now reaches the new one: nothing of either is
	 * lost, and what arrived between them (from 635 to 5000) comes twice. */
	for (uint64_t seq = (LOST_RANGES_MAX - 1) * 10 + 1; seq < 6000; seq++)
		if (!unasked_has(&l, seq))
			ck_abort_msg("commit %lu is not asked for", (unsigned long)seq);
	ck_assert(unasked_has(&l, 1) && !unasked_has(&l, 5));
	lost_ranges_free(&l);
}
END_TEST

START_TEST(ranges_lost_while_held_join_into_one)
{
	struct lost_ranges l = { 0 };

	lost_ranges_add(&l, 10, 20, true);
	lost_ranges_add(&l, 30, 40, true); /* 20..30 arrived and are held */
	lost_ranges_add(&l, 50, 60, true);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.r[0].after, 10);
	ck_assert_uint_eq(l.r[0].before, 60);
	/* Live now: what arrives between later losses is sent, so they stay
	 * apart, from the held range and from each other... */
	lost_ranges_went_live(&l);
	lost_ranges_add(&l, 70, 80, false);
	lost_ranges_add(&l, 90, 95, false);
	ck_assert_uint_eq(l.n, 3);
	/* ...and a later wait (a resume) starts a range of its own. */
	lost_ranges_add(&l, 100, 110, true);
	lost_ranges_add(&l, 120, 130, true);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_uint_eq(l.r[3].after, 100);
	ck_assert_uint_eq(l.r[3].before, 130);
	lost_ranges_free(&l);
}
END_TEST

START_TEST(a_held_range_never_joins_an_asked_one)
{
	struct lost_ranges l = { 0 };

	lost_ranges_add(&l, 10, 20, true);
	l.r[0].request_id = 7;
	lost_ranges_add(&l, 30, 40, true);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.r[0].before, 20);
	lost_ranges_free(&l);
}
END_TEST

START_TEST(only_asked_ranges_bring_a_held_delivery)
{
	struct lost_ranges l = { 0 };

	lost_ranges_add(&l, 10, 20, true);
	lost_ranges_add(&l, 30, 40, true);
	ck_assert(!lost_ranges_asked_has(&l, 25)); /* not asked yet */
	l.r[0].request_id = 7;
	ck_assert(lost_ranges_asked_has(&l, 11));
	ck_assert(lost_ranges_asked_has(&l, 25));
	ck_assert(lost_ranges_asked_has(&l, 39));
	ck_assert(!lost_ranges_asked_has(&l, 10) && !lost_ranges_asked_has(&l, 40));
	lost_ranges_answered(&l, 7);
	ck_assert(!lost_ranges_asked_has(&l, 25));
	lost_ranges_free(&l);
}
END_TEST

START_TEST(a_full_set_of_asked_ranges_refuses_more)
{
	struct lost_ranges l = { 0 };

	for (uint64_t i = 0; i < LOST_RANGES_MAX; i++) {
		ck_assert(lost_ranges_add(&l, i * 10, i * 10 + 5, false));
		lost_ranges_next_unasked(&l)->request_id = (uint32_t)i + 1;
	}
	ck_assert(!lost_ranges_add(&l, 5000, 6000, false));
	ck_assert(!unasked_has(&l, 5500));
	ck_assert(lost_ranges_answered(&l, 3));
	ck_assert(lost_ranges_add(&l, 5000, 6000, false));
	ck_assert(unasked_has(&l, 5500));
	lost_ranges_free(&l);
}
END_TEST

START_TEST(answered_ranges_go_and_unasked_ones_come_back)
{
	struct lost_ranges l = { 0 };
	struct lost_range *r;

	lost_ranges_add(&l, 10, 20, false);
	lost_ranges_add(&l, 30, 40, false);
	r = lost_ranges_next_unasked(&l);
	ck_assert_ptr_nonnull(r);
	r->request_id = 77;
	r = lost_ranges_next_unasked(&l);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_ne(r->request_id, 77);
	r->request_id = 78;
	ck_assert_ptr_null(lost_ranges_next_unasked(&l));
	ck_assert(!lost_ranges_answered(&l, 0)); /* 0 means "not asked" */
	ck_assert(!lost_ranges_answered(&l, 99));
	ck_assert(lost_ranges_answered(&l, 77));
	ck_assert(!lost_ranges_answered(&l, 77));
	ck_assert_uint_eq(l.n, 1);
	/* The link went down with 78 unanswered: it is asked again. */
	lost_ranges_unask(&l);
	r = lost_ranges_next_unasked(&l);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->request_id, 0);
	lost_ranges_free(&l);
}
END_TEST

START_TEST(a_history_takes_the_start)
{
	struct lost_ranges l = { 0 };

	lost_ranges_add(&l, 10, 90, false);   /* all at or below 100: came with it */
	lost_ranges_add(&l, 50, 150, false);  /* 51..100 came, 101..149 did not */
	lost_ranges_add(&l, 120, 130, false); /* none came */
	lost_ranges_cover(&l, 0, 100);
	ck_assert_uint_eq(l.n, 2);
	for (uint64_t seq = 0; seq < 200; seq++)
		ck_assert_int_eq(unasked_has(&l, seq), seq > 100 && seq < 150);
	lost_ranges_free(&l);
}
END_TEST

START_TEST(a_resume_splits_a_range)
{
	struct lost_ranges l = { 0 };

	lost_ranges_add(&l, 10, 150, false);
	lost_ranges_cover(&l, 40, 100); /* commits 41..100 came */
	ck_assert_uint_eq(l.n, 2);
	for (uint64_t seq = 0; seq < 200; seq++)
		ck_assert_int_eq(unasked_has(&l, seq), (seq > 10 && seq <= 40) ||
							     (seq > 100 && seq < 150));
	lost_ranges_free(&l);
}
END_TEST

START_TEST(asked_ranges_are_left_alone)
{
	struct lost_ranges l = { 0 };

	lost_ranges_add(&l, 10, 150, false);
	l.r[0].request_id = 5;
	lost_ranges_cover(&l, 0, 1000);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_uint_eq(l.r[0].after, 10);
	ck_assert_uint_eq(l.r[0].before, 150);
	lost_ranges_free(&l);
}
END_TEST

START_TEST(no_room_to_split_keeps_it_whole)
{
	struct lost_ranges l = { 0 };

	for (uint64_t i = 0; i < LOST_RANGES_MAX; i++)
		lost_ranges_add(&l, i * 100, i * 100 + 50, false);
	lost_ranges_cover(&l, 110, 120); /* inside the second range */
	ck_assert_uint_eq(l.n, LOST_RANGES_MAX);
	for (uint64_t seq = 101; seq < 150; seq++)
		ck_assert(unasked_has(&l, seq)); /* some twice, none lost */
	lost_ranges_free(&l);
}
END_TEST

START_TEST(random_covers_lose_nothing)
{
	srand(5);
	for (int round = 0; round < 3000; round++) {
		struct lost_ranges l = { 0 };
		bool before[300] = { false };
		uint32_t n = (uint32_t)(rand() % (LOST_RANGES_MAX + 1));
		uint64_t cov_after = (uint64_t)(rand() % 300), cov_to = (uint64_t)(rand() % 300);
		uint64_t from = 0;
		bool exact;

		for (uint32_t i = 0; i < n; i++) {
			/* In commit order, as losses come; some overlap. */
			uint64_t a = from + (uint64_t)(rand() % 8), b = a + (uint64_t)(rand() % 12);

			if (b > 299)
				break;
			lost_ranges_add(&l, a, b, false);
			from = a + (uint64_t)(rand() % 6);
		}
		for (uint64_t seq = 0; seq < 300; seq++)
			before[seq] = unasked_has(&l, seq);
		n = l.n;
		lost_ranges_cover(&l, cov_after, cov_to);
		/* Each range splits at most once; a split without room leaves
		 * the range whole, covered commits and all. */
		exact = n * 2 <= LOST_RANGES_MAX;
		for (uint64_t seq = 0; seq < 300; seq++) {
			bool covered = seq > cov_after && seq <= cov_to;
			bool want = before[seq] && !covered;

			bool has = unasked_has(&l, seq);

			/* ck_assert on every commit would take check minutes. */
			if (want && !has)
				ck_abort_msg("round %d lost commit %lu", round, (unsigned long)seq);
			if (!want && has && (exact || !before[seq]))
				ck_abort_msg("round %d kept commit %lu", round, (unsigned long)seq);
		}
		lost_ranges_free(&l);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lostrange");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, empty_ranges_are_not_kept);
	tcase_add_test(tc, a_full_set_joins_the_newest_unasked_range);
	tcase_add_test(tc, ranges_lost_while_held_join_into_one);
	tcase_add_test(tc, a_held_range_never_joins_an_asked_one);
	tcase_add_test(tc, only_asked_ranges_bring_a_held_delivery);
	tcase_add_test(tc, a_full_set_of_asked_ranges_refuses_more);
	tcase_add_test(tc, answered_ranges_go_and_unasked_ones_come_back);
	tcase_add_test(tc, a_history_takes_the_start);
	tcase_add_test(tc, a_resume_splits_a_range);
	tcase_add_test(tc, asked_ranges_are_left_alone);
	tcase_add_test(tc, no_room_to_split_keeps_it_whole);
	tcase_add_test(tc, random_covers_lose_nothing);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
