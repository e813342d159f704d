/*
 * test_fairq.c - checks relayd/fairq.c:
 *   - a sender that queued one item behind another sender's flood is served
 *     second, not after the flood;
 *   - an urgent item goes before every sender whose next item is not
 *     urgent, but never before its own sender's earlier items;
 *   - random pushes and pops over many senders (slots far apart, so the
 *     sender table grows), a third of them urgent, match a model kept with
 *     plain arrays: each sender's items in order, senders served in turn
 *     within their next item's class, urgent first (a sender that still has
 *     items goes to the back of its next item's class), counts right, empty
 *     pops NULL.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../relayd/fairq.h"
#include "../support/suite.h"

struct item {
	struct fairq_item link;
	uint32_t slot;
	uint32_t serial;
};

START_TEST(flood_does_not_delay_a_single_item)
{
	struct fairq q = FAIRQ_INIT;
	struct item flood[100], one = { .slot = 9 };

	for (uint32_t i = 0; i < 100; i++) {
		flood[i] = (struct item){ .slot = 3, .serial = i };
		ck_assert_int_eq(fairq_push(&q, 3, &flood[i].link, false), 0);
	}
	ck_assert_int_eq(fairq_push(&q, 9, &one.link, false), 0);
	ck_assert_ptr_eq(fairq_pop(&q), &flood[0].link);
	ck_assert_ptr_eq(fairq_pop(&q), &one.link);
	for (uint32_t i = 1; i < 100; i++)
		ck_assert_ptr_eq(fairq_pop(&q), &flood[i].link);
	ck_assert_ptr_null(fairq_pop(&q));
	ck_assert_uint_eq(q.count, 0);
	fairq_free(&q);
}
END_TEST

START_TEST(urgent_goes_first_but_not_past_its_sender)
{
	struct fairq q = FAIRQ_INIT;
	struct item flood[10], req = { .slot = 9 }, slow = { .slot = 5 }, after = { .slot = 5 };

	for (uint32_t i = 0; i < 10; i++) {
		flood[i] = (struct item){ .slot = 3, .serial = i };
		ck_assert_int_eq(fairq_push(&q, 3, &flood[i].link, false), 0);
	}
	ck_assert_int_eq(fairq_push(&q, 5, &slow.link, false), 0);
	ck_assert_int_eq(fairq_push(&q, 5, &after.link, true), 0);
	ck_assert_int_eq(fairq_push(&q, 9, &req.link, true), 0);
	ck_assert_ptr_eq(fairq_pop(&q), &req.link);        /* urgent, first in line */
	ck_assert_ptr_eq(fairq_pop(&q), &flood[0].link);   /* turn order of the rest */
	ck_assert_ptr_eq(fairq_pop(&q), &slow.link);
	ck_assert_ptr_eq(fairq_pop(&q), &after.link);      /* now its sender's next, urgent */
	for (uint32_t i = 1; i < 10; i++)
		ck_assert_ptr_eq(fairq_pop(&q), &flood[i].link);
	ck_assert_ptr_null(fairq_pop(&q));
	fairq_free(&q);
}
END_TEST

#define SENDERS 40
#define OPS 200000

/* The model: per sender a FIFO of serials with their urgency, and a turn
 * order per class ([1] urgent). */
static uint32_t model_items[SENDERS][OPS];
static bool model_urgent[SENDERS][OPS];
static size_t model_head[SENDERS], model_tail[SENDERS];
static int turn[2][SENDERS], nturn[2];

static uint32_t slot_of(int sender)
{
	return (uint32_t)sender * 997; /* sparse slots: the table must grow */
}

static void model_enqueue_sender(int sender)
{
	int cls = model_urgent[sender][model_head[sender]];

	turn[cls][nturn[cls]++] = sender;
}

START_TEST(random_against_model)
{
	struct fairq q = FAIRQ_INIT;
	struct item *items = calloc(OPS, sizeof(*items));
	uint32_t serial = 0;
	size_t queued = 0;

	ck_assert_ptr_nonnull(items);
	srand(11);
	for (int op = 0; op < OPS; op++) {
		if (rand() % 100 < 55) {
			int sender = rand() % SENDERS;
			bool urgent = rand() % 3 == 0;
			struct item *it = &items[serial];

			*it = (struct item){ .slot = slot_of(sender), .serial = serial };
			ck_assert_int_eq(fairq_push(&q, it->slot, &it->link, urgent), 0);
			model_items[sender][model_tail[sender]] = serial++;
			model_urgent[sender][model_tail[sender]++] = urgent;
			if (model_tail[sender] - model_head[sender] == 1)
				model_enqueue_sender(sender);
			queued++;
		} else {
			struct fairq_item *got = fairq_pop(&q);
			int cls = nturn[1] ? 1 : 0;

			if (!nturn[cls]) {
				ck_assert_ptr_null(got);
				continue;
			}
			int sender = turn[cls][0];
			ck_assert_ptr_nonnull(got);
			struct item *it = (struct item *)got;
			ck_assert_uint_eq(it->slot, slot_of(sender));
			ck_assert_uint_eq(it->serial, model_items[sender][model_head[sender]++]);
			for (int i = 1; i < nturn[cls]; i++)
				turn[cls][i - 1] = turn[cls][i];
			nturn[cls]--;
			if (model_head[sender] != model_tail[sender])
				model_enqueue_sender(sender);
			queued--;
		}
		ck_assert_uint_eq(q.count, queued);
	}
	while (fairq_pop(&q))
		queued--;
	ck_assert_uint_eq(queued, 0);
	fairq_free(&q);
	free(items);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fairq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, flood_does_not_delay_a_single_item);
	tcase_add_test(tc, urgent_goes_first_but_not_past_its_sender);
	tcase_add_test(tc, random_against_model);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
