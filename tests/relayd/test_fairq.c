/*
 * test_fairq.c - checks relayd/fairq.c:
 *   - a sender that queued one item behind another sender's flood is served
 *     second, not after the flood;
 *   - an urgent item goes before every sender whose next item is not
 *     urgent, but never before its own sender's earlier items;
 *   - the express server takes only urgent items, never of a sender the
 *     primary holds (until fairq_release), and while it handles a sender's
 *     item neither server gets that sender's next one;
 *   - random pushes, primary pops, releases, express pops and dones over
 *     many senders (slots far apart, so the sender table grows), a third of
 *     the items urgent, match a model kept with plain arrays: each sender's
 *     items in order, senders served in turn within their next item's
 *     class, urgent first (a sender that still has items goes to the back of
 *     its next item's class), the express server skipping held senders and
 *     the primary never getting a sender the express server is busy with,
 *     counts right, empty pops NULL; a second mix, mostly urgent with rare
 *     releases, makes the express server skip held senders often;
 *   - a sender is idle (fairq_sender_idle: the loop may handle its next
 *     request itself) only with nothing queued, not held by the primary and
 *     not in the express server's hands: checked by hand and against the
 *     model after every random step.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	/* fairq_last: each sender's newest item, NULL once it has none. */
	ck_assert_ptr_eq(fairq_last(&q, 3), &flood[99].link);
	ck_assert_ptr_eq(fairq_last(&q, 9), &one.link);
	ck_assert_ptr_null(fairq_last(&q, 4));
	ck_assert_ptr_null(fairq_last(&q, 100000));
	ck_assert_ptr_eq(fairq_pop(&q), &flood[0].link);
	ck_assert_ptr_eq(fairq_pop(&q), &one.link);
	ck_assert_ptr_null(fairq_last(&q, 9));
	for (uint32_t i = 1; i < 100; i++)
		ck_assert_ptr_eq(fairq_pop(&q), &flood[i].link);
	ck_assert_ptr_null(fairq_pop(&q));
	ck_assert_ptr_null(fairq_last(&q, 3));
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

START_TEST(express_respects_holds_and_order)
{
	struct fairq q = FAIRQ_INIT;
	struct item ev = { .slot = 3 }, req3 = { .slot = 3 }, ev5 = { .slot = 5 },
		    req7 = { .slot = 7 }, close7 = { .slot = 7 }, ev7 = { .slot = 7 };
	uint32_t slot = 0;

	ck_assert_int_eq(fairq_push(&q, 3, &ev.link, false), 0);
	ck_assert_int_eq(fairq_push(&q, 3, &req3.link, true), 0);
	ck_assert_int_eq(fairq_push(&q, 5, &ev5.link, false), 0);
	ck_assert(!fairq_express_ready(&q)); /* only non-urgent heads */
	ck_assert_ptr_null(fairq_pop_express(&q, &slot));
	ck_assert_ptr_eq(fairq_pop(&q), &ev.link); /* the primary holds 3 now */
	ck_assert(!fairq_express_ready(&q));       /* 3's REQ waits for the primary */
	ck_assert_int_eq(fairq_push(&q, 7, &req7.link, true), 0);
	ck_assert_int_eq(fairq_push(&q, 7, &close7.link, true), 0);
	ck_assert_int_eq(fairq_push(&q, 7, &ev7.link, false), 0);
	ck_assert_ptr_eq(fairq_pop_express(&q, &slot), &req7.link); /* skips held 3 */
	ck_assert_uint_eq(slot, 7);
	ck_assert(!fairq_express_ready(&q)); /* 7 is busy, 3 held */
	ck_assert_ptr_eq(fairq_pop(&q), &req3.link); /* urgent first, 7 is out */
	ck_assert_ptr_eq(fairq_pop(&q), &ev5.link);
	ck_assert_ptr_null(fairq_pop(&q)); /* 7's CLOSE waits for the express */
	fairq_express_done(&q, 7);
	fairq_release(&q);
	ck_assert_ptr_eq(fairq_pop_express(&q, &slot), &close7.link);
	fairq_express_done(&q, 7);
	ck_assert_ptr_null(fairq_pop_express(&q, &slot)); /* an EVENT is next */
	ck_assert_ptr_eq(fairq_pop(&q), &ev7.link);
	ck_assert_uint_eq(q.count, 0);
	fairq_free(&q);
}
END_TEST

START_TEST(idle_only_when_nothing_is_queued_held_or_busy)
{
	struct fairq q = FAIRQ_INIT;
	struct item ev = { .slot = 3 }, req = { .slot = 4 };
	uint32_t slot = 0;

	ck_assert(fairq_sender_idle(&q, 3));    /* never seen */
	ck_assert(fairq_sender_idle(&q, 5000)); /* beyond the table */
	ck_assert_int_eq(fairq_push(&q, 3, &ev.link, false), 0);
	ck_assert(!fairq_sender_idle(&q, 3)); /* queued */
	ck_assert(fairq_sender_idle(&q, 4));
	ck_assert_ptr_eq(fairq_pop(&q), &ev.link);
	ck_assert(!fairq_sender_idle(&q, 3)); /* the primary holds it (its bundle) */
	fairq_release(&q);
	ck_assert(fairq_sender_idle(&q, 3));
	ck_assert_int_eq(fairq_push(&q, 4, &req.link, true), 0);
	ck_assert_ptr_eq(fairq_pop_express(&q, &slot), &req.link);
	ck_assert(!fairq_sender_idle(&q, 4)); /* the express server is handling it */
	fairq_express_done(&q, 4);
	ck_assert(fairq_sender_idle(&q, 4));
	fairq_free(&q);
}
END_TEST

#define SENDERS 40
#define OPS 200000

/* The model: per sender a FIFO of serials with their urgency, a turn order
 * per class ([1] urgent), and which senders the primary holds and the
 * express server is busy with. */
static uint32_t model_items[SENDERS][OPS];
static bool model_urgent[SENDERS][OPS];
static size_t model_head[SENDERS], model_tail[SENDERS];
static int turn[2][SENDERS], nturn[2];
static bool held[SENDERS], busy[SENDERS];
/* Two mixes ([_i] of the loop test): the second has most items urgent and
 * rare releases, so the express server often skips held senders. */
static const int urgent_percent[2] = { 33, 70 }, release_percent[2] = { 7, 1 };
static int mix;

static uint32_t slot_of(int sender)
{
	return (uint32_t)sender * 997; /* sparse slots: the table must grow */
}

static void model_enqueue_sender(int sender)
{
	int cls = model_urgent[sender][model_head[sender]];

	turn[cls][nturn[cls]++] = sender;
}

static void model_remove_turn(int cls, int at)
{
	for (int i = at + 1; i < nturn[cls]; i++)
		turn[cls][i - 1] = turn[cls][i];
	nturn[cls]--;
}

/* Checks that got is sender's next item in the model and consumes it. */
static void model_expect(int sender, struct fairq_item *got)
{
	struct item *it = (struct item *)got;

	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(it->slot, slot_of(sender));
	ck_assert_uint_eq(it->serial, model_items[sender][model_head[sender]++]);
}

static void model_push(struct fairq *q, struct item *items, uint32_t *serial)
{
	int sender = rand() % SENDERS;
	bool urgent = rand() % 100 < urgent_percent[mix];
	struct item *it = &items[*serial];

	*it = (struct item){ .slot = slot_of(sender), .serial = *serial };
	ck_assert_int_eq(fairq_push(q, it->slot, &it->link, urgent), 0);
	model_items[sender][model_tail[sender]] = (*serial)++;
	model_urgent[sender][model_tail[sender]++] = urgent;
	if (model_tail[sender] - model_head[sender] == 1 && !busy[sender])
		model_enqueue_sender(sender);
}

/* The primary: first in turn, urgent class first; the sender becomes held. */
static bool model_pop(struct fairq *q)
{
	struct fairq_item *got = fairq_pop(q);
	int cls = nturn[1] ? 1 : 0;

	if (!nturn[cls]) {
		ck_assert_ptr_null(got);
		return false;
	}
	int sender = turn[cls][0];
	ck_assert(!busy[sender]);
	model_expect(sender, got);
	model_remove_turn(cls, 0);
	held[sender] = true;
	if (model_head[sender] != model_tail[sender])
		model_enqueue_sender(sender);
	return true;
}

/* The express server: the first urgent sender not held; it leaves the turn
 * order until done. */
static int model_pop_express(struct fairq *q)
{
	uint32_t slot = UINT32_MAX;
	struct fairq_item *got;
	int at = 0;

	while (at < nturn[1] && held[turn[1][at]])
		at++;
	ck_assert_int_eq(fairq_express_ready(q), at < nturn[1]);
	got = fairq_pop_express(q, &slot);
	if (at == nturn[1]) {
		ck_assert_ptr_null(got);
		return -1;
	}
	int sender = turn[1][at];
	ck_assert_uint_eq(slot, slot_of(sender));
	model_expect(sender, got);
	model_remove_turn(1, at);
	busy[sender] = true;
	return sender;
}

static void model_express_done(struct fairq *q, int sender)
{
	fairq_express_done(q, slot_of(sender));
	busy[sender] = false;
	if (model_head[sender] != model_tail[sender])
		model_enqueue_sender(sender);
}

START_TEST(random_against_model)
{
	struct fairq q = FAIRQ_INIT;
	struct item *items = calloc(OPS, sizeof(*items));
	uint32_t serial = 0;
	int in_express[4], nexpress = 0;
	size_t popped = 0;

	ck_assert_ptr_nonnull(items);
	mix = _i;
	memset(model_head, 0, sizeof(model_head));
	memset(model_tail, 0, sizeof(model_tail));
	memset(nturn, 0, sizeof(nturn));
	memset(held, 0, sizeof(held));
	memset(busy, 0, sizeof(busy));
	srand(11);
	for (int op = 0; op < OPS; op++) {
		int dice = rand() % 100;

		if (dice < 48) {
			model_push(&q, items, &serial);
		} else if (dice < 75) {
			popped += model_pop(&q);
		} else if (dice < 85) {
			int sender;

			if (nexpress < 4 && (sender = model_pop_express(&q)) >= 0) {
				in_express[nexpress++] = sender;
				popped++;
			}
		} else if (dice < 100 - release_percent[mix]) {
			if (nexpress) {
				int at = rand() % nexpress;

				model_express_done(&q, in_express[at]);
				in_express[at] = in_express[--nexpress];
			}
		} else {
			fairq_release(&q);
			for (int i = 0; i < SENDERS; i++)
				held[i] = false;
		}
		ck_assert_uint_eq(q.count, serial - popped);
		for (int i = 0; i < SENDERS; i++)
			if (fairq_sender_idle(&q, slot_of(i)) !=
			    (model_head[i] == model_tail[i] && !held[i] && !busy[i]))
				ck_abort_msg("op %d: sender %d idle is %d", op, i,
					     fairq_sender_idle(&q, slot_of(i)));
	}
	while (nexpress)
		model_express_done(&q, in_express[--nexpress]);
	while (fairq_pop(&q))
		popped++;
	ck_assert_uint_eq(popped, serial);
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
	tcase_add_test(tc, express_respects_holds_and_order);
	tcase_add_test(tc, idle_only_when_nothing_is_queued_held_or_busy);
	tcase_add_loop_test(tc, random_against_model, 0, 2);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
