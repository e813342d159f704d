/*
 * test_turnqueue.c - checks stored/turnqueue.c: senders are served in turn
 * with each sender's order kept, a flooding sender's backlog does not hold
 * back a sender that arrives later (and does with turns off), the bound
 * counts items over all senders, one sender cannot pass its own bound,
 * close semantics (pushes refused, queued items still popped, a
 * blocked consumer woken), the running cap (a sender at it is skipped
 * until done, a consumer waiting for it is woken by done, also after a
 * close), that the consumer to wait last is woken first, and under
 * threads that every item arrives exactly once with each producer's order
 * kept, and with the cap that no producer ever has more items worked on at
 * once than it allows.  The consumers kept for cheap senders: an item's
 * cost marks its sender heavy or cheap, the items of heavy and of new
 * senders run on the other consumers only (also under threads), a cheap
 * item does not clear a heavy mark, marks run out, and without a reserve
 * nothing is held.
 *
 * Items are small integers cast to pointers (never 0, which turnqueue_pop
 * uses for "closed"): sender * 1000 + sequence.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "../../common/err.h"
#include "../../stored/turnqueue.h"
#include "../support/suite.h"

#define ITEM(n) ((void *)(uintptr_t)(n))
#define VALUE(p) ((uintptr_t)(p))

static struct turn_sender sender(uint64_t conn)
{
	return (struct turn_sender){ 1, conn };
}

START_TEST(senders_are_served_in_turn)
{
	struct turnqueue *q = turnqueue_new(64, 64, true);
	const uintptr_t want[] = { 1001, 2001, 3001, 1002, 2002, 1003 };

	ck_assert_ptr_nonnull(q);
	for (uintptr_t i = 1; i <= 3; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1000 + i)), 0);
	for (uintptr_t i = 1; i <= 2; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2000 + i)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(3), ITEM(3001)), 0);
	ck_assert_uint_eq(turnqueue_length(q), 6);
	ck_assert_uint_eq(turnqueue_senders(q), 3);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), want[i]);
	ck_assert_uint_eq(turnqueue_length(q), 0);
	ck_assert_uint_eq(turnqueue_senders(q), 0);
	turnqueue_free(q);
}
END_TEST

/* Sender 1 queued 100 before sender 2's one: sender 2 waits for one of
 * them, not all.  The same connection id under another worker is another
 * sender. */
START_TEST(a_late_sender_waits_for_one_item_of_a_flood)
{
	struct turnqueue *q = turnqueue_new(1000, 1000, true);

	for (uintptr_t i = 1; i <= 100; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1000 + i)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1001);
	ck_assert_int_eq(turnqueue_push(q, (struct turn_sender){ 2, 1 }, ITEM(2001)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1002);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2001);
	for (uintptr_t i = 3; i <= 100; i++)
		ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1000 + i);
	turnqueue_free(q);
}
END_TEST

/* Without turns, the flood's backlog goes first: first come, first served. */
START_TEST(without_turns_first_come_first_served)
{
	struct turnqueue *q = turnqueue_new(1000, 1000, false);

	for (uintptr_t i = 1; i <= 100; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1000 + i)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	for (uintptr_t i = 1; i <= 100; i++)
		ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1000 + i);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2001);
	turnqueue_free(q);
}
END_TEST

START_TEST(the_bound_counts_all_senders)
{
	struct turnqueue *q = turnqueue_new(3, 3, true);

	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1002)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(3), ITEM(3001)), ERR_FULL);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1003)), ERR_FULL);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1001);
	ck_assert_int_eq(turnqueue_push(q, sender(3), ITEM(3001)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2001);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1002);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 3001);
	turnqueue_free(q);
}
END_TEST

/* One sender at its own bound is refused; the others are not, and it may
 * push again once one of its items is taken. */
START_TEST(one_sender_cannot_fill_the_queue)
{
	struct turnqueue *q = turnqueue_new(100, 2, true);

	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1002)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1003)), ERR_TOOBIG);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2002)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1001);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1003)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1004)), ERR_TOOBIG);
	ck_assert_uint_eq(turnqueue_length(q), 4);
	turnqueue_free(q);
	/* First come, first served has no senders to bound. */
	q = turnqueue_new(100, 2, false);
	for (uintptr_t i = 1; i <= 5; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1000 + i)), 0);
	turnqueue_free(q);
}
END_TEST

START_TEST(close_refuses_pushes_and_drains)
{
	struct turnqueue *q = turnqueue_new(8, 8, true);

	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001)), 0);
	turnqueue_close(q);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), ERR_CLOSED);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1001);
	ck_assert_ptr_null(turnqueue_pop(q, NULL));
	turnqueue_free(q);
}
END_TEST

/* Items still queued are freed with the queue (ASan's leak check). */
START_TEST(free_with_items_queued)
{
	struct turnqueue *q = turnqueue_new(8, 8, true);

	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1002)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	turnqueue_free(q);
}
END_TEST

static void *pop_one(void *arg)
{
	return turnqueue_pop(arg, NULL);
}

static void *pop_one_light(void *arg)
{
	return turnqueue_pop_light(arg, NULL);
}

/* A thread blocked in pop (pop_one or pop_one_light): returns once the
 * queue counts it among its waiting consumers, so the order in which
 * threads began to wait is the order of the calls. */
static pthread_t waiting_in(struct turnqueue *q, void *(*pop)(void *))
{
	struct timespec pause = { 0, 1000000L };
	size_t before = turnqueue_waiting_consumers(q);
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, pop, q), 0);
	for (int i = 0; i < 60000 && turnqueue_waiting_consumers(q) == before; i++)
		nanosleep(&pause, NULL);
	ck_assert_uint_eq(turnqueue_waiting_consumers(q), before + 1);
	return t;
}

static pthread_t waiting_consumer(struct turnqueue *q)
{
	return waiting_in(q, pop_one);
}

/* A consumer kept for cheap senders, blocked in turnqueue_pop_light(). */
static pthread_t waiting_kept_consumer(struct turnqueue *q)
{
	return waiting_in(q, pop_one_light);
}

START_TEST(a_blocked_consumer_is_woken)
{
	struct turnqueue *q = turnqueue_new(8, 8, true);
	pthread_t t = waiting_consumer(q);
	void *got;

	ck_assert_int_eq(turnqueue_push(q, sender(5), ITEM(5001)), 0);
	pthread_join(t, &got);
	ck_assert_uint_eq(VALUE(got), 5001);
	t = waiting_consumer(q);
	turnqueue_close(q);
	pthread_join(t, &got);
	ck_assert_ptr_null(got);
	turnqueue_free(q);
}
END_TEST

START_TEST(a_sender_at_the_running_cap_is_skipped_until_done)
{
	struct turnqueue *q = turnqueue_new(64, 64, true);
	struct turn_sender from = { 0, 0 };

	turnqueue_bound_running(q, 1);
	for (int i = 1; i <= 3; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1000 + i)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, &from)), 1001);
	ck_assert_uint_eq(from.conn_id, 1);
	ck_assert_uint_eq(turnqueue_running(q), 1);
	/* Sender 1 is first in turn with 1002, but at its cap. */
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, &from)), 2001);
	ck_assert_uint_eq(from.conn_id, 2);
	ck_assert_uint_eq(turnqueue_running(q), 2);
	turnqueue_done(q, sender(2), 0);
	turnqueue_done(q, sender(1), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1002);
	turnqueue_done(q, sender(1), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1003);
	turnqueue_done(q, sender(1), 0);
	ck_assert_uint_eq(turnqueue_running(q), 0);
	ck_assert_uint_eq(turnqueue_senders(q), 0);
	turnqueue_free(q);
}
END_TEST

/* Whether thread t has not returned within 50 ms. */
static int still_waiting(pthread_t t)
{
	struct timespec pause = { 0, 50 * 1000000L };

	nanosleep(&pause, NULL);
	return pthread_tryjoin_np(t, NULL) != 0;
}

START_TEST(done_wakes_a_consumer_waiting_for_a_capped_sender)
{
	struct turnqueue *q = turnqueue_new(64, 64, true);
	pthread_t t;
	void *got;

	turnqueue_bound_running(q, 2);
	for (int i = 1; i <= 4; i++)
		ck_assert_int_eq(turnqueue_push(q, sender(7), ITEM(7000 + i)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 7001);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 7002);
	t = waiting_consumer(q);
	ck_assert(still_waiting(t));
	turnqueue_done(q, sender(7), 0);
	pthread_join(t, &got);
	ck_assert_uint_eq(VALUE(got), 7003);
	/* After a close the queued item still runs once a slot frees. */
	turnqueue_close(q);
	t = waiting_consumer(q);
	ck_assert(still_waiting(t));
	turnqueue_done(q, sender(7), 0);
	pthread_join(t, &got);
	ck_assert_uint_eq(VALUE(got), 7004);
	/* Drained: NULL at once, with items still running. */
	ck_assert_ptr_null(turnqueue_pop(q, NULL));
	ck_assert_uint_eq(turnqueue_running(q), 2);
	turnqueue_done(q, sender(7), 0);
	turnqueue_done(q, sender(7), 0);
	ck_assert_uint_eq(turnqueue_running(q), 0);
	turnqueue_free(q);
}
END_TEST

START_TEST(the_last_consumer_to_wait_is_woken_first)
{
	/* It has the warmest caches (turnqueue.c). */
	struct turnqueue *q = turnqueue_new(8, 8, true);
	pthread_t first = waiting_consumer(q), last = waiting_consumer(q);
	void *got;

	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001)), 0);
	pthread_join(last, &got);
	ck_assert_uint_eq(VALUE(got), 1001);
	ck_assert(still_waiting(first));
	turnqueue_close(q);
	pthread_join(first, &got);
	ck_assert_ptr_null(got);
	turnqueue_free(q);
}
END_TEST

START_TEST(free_with_items_running)
{
	/* The senders only running are freed too (the sanitizer build sees a
	 * leak otherwise). */
	struct turnqueue *q = turnqueue_new(8, 8, true);

	turnqueue_bound_running(q, 1);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2002)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1001);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2001);
	ck_assert_uint_eq(turnqueue_senders(q), 1);
	turnqueue_free(q);
}
END_TEST

#define MS 1000000ull

/* Two consumers, one kept for senders known cheap; an item costing 1000 ns
 * or more marks its sender heavy for heavy_ms, one costing less marks it
 * cheap for cheap_ms. */
/* The queues of these tests read this clock, which only pass_ms() moves:
 * a mark runs out when the test says, however slow the machine. */
static uint64_t test_now_ns = 1000 * MS;

static uint64_t test_clock(void *arg)
{
	return test_now_ns;
}

static void pass_ms(uint64_t ms)
{
	test_now_ns += ms * MS;
}

static struct turnqueue *one_kept_of_two(size_t reserved, uint64_t heavy_ms, uint64_t cheap_ms)
{
	struct turnqueue *q = turnqueue_new(64, 64, true);

	turnqueue_set_clock(q, test_clock, NULL);
	turnqueue_bound_running(q, 1);
	turnqueue_keep_for_light(q, &(struct turn_reserve){ 2, reserved, 1000, heavy_ms * MS,
							    cheap_ms * MS });
	return q;
}

/* Runs one item of sender conn, at cost_ns. */
static void run_one(struct turnqueue *q, uint64_t conn, uintptr_t item, uint64_t cost_ns)
{
	ck_assert_int_eq(turnqueue_push(q, sender(conn), ITEM(item)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), item);
	turnqueue_done(q, sender(conn), cost_ns);
}

static void expect_marked(struct turnqueue *q, size_t heavy, size_t cheap)
{
	size_t h, c;

	turnqueue_marked_senders(q, &h, &c);
	ck_assert_uint_eq(h, heavy);
	ck_assert_uint_eq(c, cheap);
}

START_TEST(senders_not_known_cheap_leave_the_kept_consumer_to_cheap_ones)
{
	struct turnqueue *q = one_kept_of_two(1, 60000, 60000);
	pthread_t t;
	void *got;

	run_one(q, 3, 3001, 999);
	run_one(q, 1, 1001, 1000);
	expect_marked(q, 1, 1);
	ck_assert_uint_eq(turnqueue_heavy_items(q), 1);
	/* 1 is heavy, 2 is new, 3 is cheap. */
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1002)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(3), ITEM(3002)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1002);
	ck_assert_uint_eq(turnqueue_running_held(q), 1);
	/* 2 is next in turn, but not known cheap with the other consumer busy. */
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 3002);
	t = waiting_consumer(q);
	turnqueue_done(q, sender(3), 0);
	ck_assert(still_waiting(t));
	/* 1's end wakes the consumer for 2; a cheap item does not clear 1's
	 * heavy mark. */
	turnqueue_done(q, sender(1), 0);
	pthread_join(t, &got);
	ck_assert_uint_eq(VALUE(got), 2001);
	expect_marked(q, 1, 1);
	turnqueue_done(q, sender(2), 0);
	expect_marked(q, 1, 2);
	ck_assert_uint_eq(turnqueue_running_held(q), 0);
	turnqueue_free(q);
}
END_TEST

START_TEST(a_kept_consumer_takes_only_cheap_senders_items)
{
	struct turnqueue *q = one_kept_of_two(1, 60000, 60000);
	pthread_t kept;
	void *got;

	run_one(q, 3, 3001, 999); /* 3 is cheap */
	run_one(q, 1, 1001, 1000); /* 1 is heavy */
	kept = waiting_kept_consumer(q);
	/* Neither a heavy sender's item nor a new one's wakes it, though the
	 * other consumer is free to take them. */
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1002)), 0);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001)), 0);
	ck_assert(still_waiting(kept));
	ck_assert_uint_eq(turnqueue_length(q), 2);
	ck_assert_int_eq(turnqueue_push(q, sender(3), ITEM(3002)), 0);
	pthread_join(kept, &got);
	ck_assert_uint_eq(VALUE(got), 3002);
	turnqueue_done(q, sender(3), 0);
	/* With its items gone, a kept consumer asked again waits, and the
	 * others take the held items in turn. */
	kept = waiting_kept_consumer(q);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1002);
	turnqueue_done(q, sender(1), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2001);
	turnqueue_done(q, sender(2), 0);
	ck_assert(still_waiting(kept));
	turnqueue_close(q);
	pthread_join(kept, &got);
	ck_assert_ptr_null(got);
	turnqueue_free(q);
}
END_TEST

START_TEST(a_cheap_senders_item_wakes_a_kept_consumer_first)
{
	struct turnqueue *q = one_kept_of_two(1, 60000, 60000);
	pthread_t kept, other;
	void *got;

	run_one(q, 3, 3001, 999); /* 3 is cheap */
	/* The other consumer waited last, so plain turns would wake it. */
	kept = waiting_kept_consumer(q);
	other = waiting_consumer(q);
	ck_assert_int_eq(turnqueue_push(q, sender(3), ITEM(3002)), 0);
	pthread_join(kept, &got);
	ck_assert_uint_eq(VALUE(got), 3002);
	ck_assert(still_waiting(other));
	turnqueue_done(q, sender(3), 0);
	/* A new sender's item goes to the other, with a kept one waiting. */
	kept = waiting_kept_consumer(q);
	ck_assert_int_eq(turnqueue_push(q, sender(4), ITEM(4001)), 0);
	pthread_join(other, &got);
	ck_assert_uint_eq(VALUE(got), 4001);
	ck_assert(still_waiting(kept));
	turnqueue_done(q, sender(4), 0);
	turnqueue_close(q);
	pthread_join(kept, &got);
	ck_assert_ptr_null(got);
	turnqueue_free(q);
}
END_TEST

START_TEST(marks_run_out)
{
	struct turnqueue *q = one_kept_of_two(1, 100, 100);

	run_one(q, 1, 1001, 1000);
	run_one(q, 1, 1002, 0);
	expect_marked(q, 1, 0);
	pass_ms(150);
	expect_marked(q, 0, 0);
	/* Unmarked, 1 is shown cheap by one cheap item. */
	run_one(q, 1, 1003, 0);
	run_one(q, 2, 2001, 1000);
	expect_marked(q, 1, 1);
	ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2002)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2002);
	ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1004)), 0);
	ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1004);
	ck_assert_uint_eq(turnqueue_running_held(q), 1);
	turnqueue_done(q, sender(1), 0);
	turnqueue_done(q, sender(2), 0);
	ck_assert_uint_eq(turnqueue_running_held(q), 0);
	turnqueue_free(q);
}
END_TEST

START_TEST(a_heavy_mark_outlasts_cheap_items)
{
	/* Small items between dear ones do not make a sender cheap before its
	 * heavy mark ends (query.h: QUERY_HEAVY_FOR_MS). */
	struct turnqueue *q = one_kept_of_two(1, 400, 100);

	run_one(q, 1, 1001, 1000);
	pass_ms(150);
	run_one(q, 1, 1002, 0);
	expect_marked(q, 1, 0);
	pass_ms(300); /* 450 ms after the dear item, 300 after the cheap one */
	run_one(q, 1, 1003, 0);
	expect_marked(q, 0, 1);
	turnqueue_free(q);
}
END_TEST

START_TEST(slots_kept_for_marks_are_swept_once_they_run_out)
{
	/* Memory over months: a connection that closed after a query leaves a
	 * slot for its mark, and the sweep (at most once a second, 64 slots a
	 * look, again at once after a full one) frees it when the mark ends. */
	struct turnqueue *q = one_kept_of_two(1, 100, 100);

	for (uint64_t conn = 1; conn <= 1000; conn++)
		run_one(q, conn, conn * 1000 + 1, conn % 2 ? 1000 : 0);
	expect_marked(q, 500, 500);
	ck_assert_uint_eq(turnqueue_slots(q), 1000);
	pass_ms(1100);
	/* Each done looks; a full look lets the next one look again. */
	for (int i = 0; i < 1000 / 64 + 1; i++)
		run_one(q, 5000, 5000001 + (uintptr_t)i, 0);
	ck_assert_uint_eq(turnqueue_slots(q), 1); /* 5000's own, marked cheap */
	expect_marked(q, 0, 1);
	turnqueue_free(q);
}
END_TEST

START_TEST(without_a_reserve_nobody_is_held)
{
	/* The costs are still counted, but nobody is marked or held. */
	struct turnqueue *q = one_kept_of_two(0, 60000, 60000);

	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(turnqueue_push(q, sender(1), ITEM(1001 + round)), 0);
		ck_assert_int_eq(turnqueue_push(q, sender(2), ITEM(2001 + round)), 0);
		ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 1001 + round);
		ck_assert_uint_eq(VALUE(turnqueue_pop(q, NULL)), 2001 + round);
		turnqueue_done(q, sender(1), 5000);
		turnqueue_done(q, sender(2), 5000);
	}
	ck_assert_uint_eq(turnqueue_heavy_items(q), 4);
	expect_marked(q, 0, 0);
	turnqueue_free(q);
}
END_TEST

#define PRODUCERS 4
#define CONSUMERS 3
#define PER_PRODUCER 20000

struct run {
	struct turnqueue *q;
	bool kept; /* pops with turnqueue_pop_light() */
	uint64_t producer;
	/* per consumer: the last sequence it saw of each producer */
	uintptr_t last[PRODUCERS + 1];
	uint64_t seen[PRODUCERS + 1];
	int order_broken;
	/* With a running cap: items of each producer being worked on, shared
	 * by the consumers, and how often one saw more than the cap. */
	atomic_int *running;
	int cap, over_cap;
	/* With consumers kept for light senders (every producer heavy): items
	 * worked on at once, and how often one saw more than heavy_cap. */
	atomic_int *heavy_running;
	int heavy_cap, over_heavy_cap;
};

static void *produce(void *arg)
{
	struct run *r = arg;

	for (uintptr_t i = 1; i <= PER_PRODUCER; i++)
		while (turnqueue_push(r->q, sender(r->producer), ITEM(r->producer * 100000 + i)))
			sched_yield(); /* full: a consumer makes room */
	return NULL;
}

static void *consume(void *arg)
{
	struct run *r = arg;
	void *p;

	struct turn_sender who;

	while ((p = r->kept ? turnqueue_pop_light(r->q, &who) : turnqueue_pop(r->q, &who))) {
		uintptr_t from = VALUE(p) / 100000, seq = VALUE(p) % 100000;

		if (atomic_fetch_add(&r->running[from], 1) >= r->cap && r->cap)
			r->over_cap++;
		if (atomic_fetch_add(r->heavy_running, 1) >= r->heavy_cap && r->heavy_cap)
			r->over_heavy_cap++;
		sched_yield(); /* "work": let another consumer try */
		atomic_fetch_sub(r->heavy_running, 1);
		atomic_fetch_sub(&r->running[from], 1);
		turnqueue_done(r->q, who, 0);

		/* Several consumers: one sees a producer's items in order among
		 * those it takes. */
		if (seq <= r->last[from])
			r->order_broken++;
		r->last[from] = seq;
		r->seen[from]++;
	}
	return NULL;
}

/* Marks every producer heavy for a minute: one item each, popped and done
 * at the threshold's cost, before the threads start. */
static void mark_producers_heavy(struct turnqueue *q)
{
	struct turn_sender who;

	turnqueue_keep_for_light(q, &(struct turn_reserve){ CONSUMERS, 1, 1000,
							    60ull * 1000000000, 60ull * 1000000000 });
	for (uint64_t p = 1; p <= PRODUCERS; p++) {
		ck_assert_int_eq(turnqueue_push(q, sender(p), ITEM(p * 100000)), 0);
		ck_assert_ptr_nonnull(turnqueue_pop(q, &who));
		turnqueue_done(q, who, 1000);
	}
	expect_marked(q, PRODUCERS, 0);
}

/* PRODUCERS x PER_PRODUCER items through CONSUMERS threads, with a running
 * cap of cap per producer (0: none); light: one consumer kept for light
 * senders, and every producer heavy; kept: that one pops with
 * turnqueue_pop_light(), and must take none of their items. */
static void run_threads(int cap, bool light, bool kept)
{
	struct turnqueue *q = turnqueue_new(256, 256, true);
	struct run prod[PRODUCERS], cons[CONSUMERS];
	pthread_t pt[PRODUCERS], ct[CONSUMERS];
	atomic_int running[PRODUCERS + 1] = { 0 }, heavy_running = 0;

	turnqueue_bound_running(q, (size_t)cap);
	if (light)
		mark_producers_heavy(q);
	for (int i = 0; i < CONSUMERS; i++) {
		cons[i] = (struct run){ .q = q, .kept = kept && i == 0, .running = running, .cap = cap,
					.heavy_running = &heavy_running,
					.heavy_cap = light ? CONSUMERS - 1 : 0 };
		ck_assert_int_eq(pthread_create(&ct[i], NULL, consume, &cons[i]), 0);
	}
	for (int i = 0; i < PRODUCERS; i++) {
		prod[i] = (struct run){ .q = q, .producer = (uint64_t)i + 1 };
		ck_assert_int_eq(pthread_create(&pt[i], NULL, produce, &prod[i]), 0);
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(pt[i], NULL);
	turnqueue_close(q);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(ct[i], NULL);
	for (int p = 1; p <= PRODUCERS; p++) {
		uint64_t total = 0;

		for (int i = 0; i < CONSUMERS; i++)
			total += cons[i].seen[p];
		ck_assert_uint_eq(total, PER_PRODUCER);
	}
	for (int p = 1; kept && p <= PRODUCERS; p++)
		ck_assert_uint_eq(cons[0].seen[p], 0);
	for (int i = 0; i < CONSUMERS; i++) {
		ck_assert_int_eq(cons[i].order_broken, 0);
		ck_assert_int_eq(cons[i].over_cap, 0);
		ck_assert_int_eq(cons[i].over_heavy_cap, 0);
	}
	ck_assert_uint_eq(turnqueue_length(q), 0);
	ck_assert_uint_eq(turnqueue_running(q), 0);
	ck_assert_uint_eq(turnqueue_running_held(q), 0);
	turnqueue_free(q);
}

START_TEST(threads_get_every_item_once_in_each_senders_order)
{
	run_threads(0, false, false);
}
END_TEST

START_TEST(threads_never_pass_the_running_cap)
{
	run_threads(1, false, false);
}
END_TEST

START_TEST(threads_never_run_heavy_senders_on_the_kept_consumer)
{
	run_threads(0, true, false);
}
END_TEST

START_TEST(threads_kept_for_cheap_senders_take_none_of_heavy_ones)
{
	run_threads(0, true, true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("turnqueue");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, senders_are_served_in_turn);
	tcase_add_test(tc, a_late_sender_waits_for_one_item_of_a_flood);
	tcase_add_test(tc, without_turns_first_come_first_served);
	tcase_add_test(tc, the_bound_counts_all_senders);
	tcase_add_test(tc, one_sender_cannot_fill_the_queue);
	tcase_add_test(tc, close_refuses_pushes_and_drains);
	tcase_add_test(tc, free_with_items_queued);
	tcase_add_test(tc, a_blocked_consumer_is_woken);
	tcase_add_test(tc, a_sender_at_the_running_cap_is_skipped_until_done);
	tcase_add_test(tc, done_wakes_a_consumer_waiting_for_a_capped_sender);
	tcase_add_test(tc, the_last_consumer_to_wait_is_woken_first);
	tcase_add_test(tc, free_with_items_running);
	tcase_add_test(tc, threads_get_every_item_once_in_each_senders_order);
	tcase_add_test(tc, threads_never_pass_the_running_cap);
	tcase_add_test(tc, senders_not_known_cheap_leave_the_kept_consumer_to_cheap_ones);
	tcase_add_test(tc, marks_run_out);
	tcase_add_test(tc, a_heavy_mark_outlasts_cheap_items);
	tcase_add_test(tc, slots_kept_for_marks_are_swept_once_they_run_out);
	tcase_add_test(tc, without_a_reserve_nobody_is_held);
	tcase_add_test(tc, threads_never_run_heavy_senders_on_the_kept_consumer);
	tcase_add_test(tc, a_kept_consumer_takes_only_cheap_senders_items);
	tcase_add_test(tc, a_cheap_senders_item_wakes_a_kept_consumer_first);
	tcase_add_test(tc, threads_kept_for_cheap_senders_take_none_of_heavy_ones);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
