/*
 * test_queue.c - checks stored/queue.c: FIFO order across wrap-around,
 * refusal when full, push_many (order, a partial push when nearly full,
 * one call waking every waiting consumer), close semantics, pop_nowait,
 * that a blocked consumer is woken by a push and by close, and under
 * threads that every item arrives exactly once with each producer's order
 * kept.
 *
 * Items are small integers cast to pointers (never 0, which queue_pop uses
 * for "closed").  In the threaded tests an item carries its producer and its
 * sequence number, so the consumer can check order by itself.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "../../common/err.h"
#include "../../stored/queue.h"
#include "../support/suite.h"

#define ITEM(n) ((void *)(uintptr_t)(n))
#define VALUE(p) ((uintptr_t)(p))

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

START_TEST(test_fifo)
{
	struct queue *q = queue_new(8);

	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(queue_length(q), 0);
	for (uintptr_t i = 1; i <= 8; i++)
		ck_assert_int_eq(queue_push(q, ITEM(i)), 0);
	ck_assert_uint_eq(queue_length(q), 8);
	for (uintptr_t i = 1; i <= 8; i++)
		ck_assert_uint_eq(VALUE(queue_pop(q)), i);
	ck_assert_uint_eq(queue_length(q), 0);
	ck_assert_ptr_null(queue_pop_nowait(q));
	queue_free(q);
}
END_TEST

/* Interleaved pushes and pops walk the ring round many times. */
START_TEST(test_wrap_around)
{
	struct queue *q = queue_new(3);
	uintptr_t next_in = 1, next_out = 1;
	int bad = 0;

	for (int round = 0; round < 1000; round++) {
		int pushes = 1 + round % 3;

		for (int i = 0; i < pushes && queue_length(q) < 3; i++)
			bad |= queue_push(q, ITEM(next_in++)) != 0;
		while (queue_length(q) > (size_t)(round % 2))
			bad |= VALUE(queue_pop_nowait(q)) != next_out++;
	}
	ck_assert_int_eq(bad, 0);
	while (queue_length(q))
		ck_assert_uint_eq(VALUE(queue_pop(q)), next_out++);
	ck_assert_uint_eq(next_in, next_out);
	queue_free(q);
}
END_TEST

START_TEST(test_full)
{
	struct queue *q = queue_new(4);

	for (uintptr_t i = 1; i <= 4; i++)
		ck_assert_int_eq(queue_push(q, ITEM(i)), 0);
	ck_assert_int_eq(queue_push(q, ITEM(5)), ERR_FULL);
	ck_assert_int_eq(queue_push(q, ITEM(5)), ERR_FULL);
	ck_assert_uint_eq(queue_length(q), 4);
	/* The refused item did not displace anything. */
	ck_assert_uint_eq(VALUE(queue_pop(q)), 1);
	ck_assert_int_eq(queue_push(q, ITEM(5)), 0);
	ck_assert_int_eq(queue_push(q, ITEM(6)), ERR_FULL);
	for (uintptr_t i = 2; i <= 5; i++)
		ck_assert_uint_eq(VALUE(queue_pop(q)), i);
	queue_free(q);
}
END_TEST

START_TEST(test_capacity_one)
{
	struct queue *q = queue_new(1);

	for (uintptr_t i = 1; i <= 5; i++) {
		ck_assert_int_eq(queue_push(q, ITEM(i)), 0);
		ck_assert_int_eq(queue_push(q, ITEM(99)), ERR_FULL);
		ck_assert_uint_eq(VALUE(queue_pop_nowait(q)), i);
	}
	queue_free(q);
}
END_TEST

START_TEST(test_close_drains)
{
	struct queue *q = queue_new(4);

	ck_assert_int_eq(queue_push(q, ITEM(1)), 0);
	ck_assert_int_eq(queue_push(q, ITEM(2)), 0);
	queue_close(q);
	/* Closed wins over room (and over full). */
	ck_assert_int_eq(queue_push(q, ITEM(3)), ERR_CLOSED);
	ck_assert_uint_eq(queue_length(q), 2);
	ck_assert_uint_eq(VALUE(queue_pop(q)), 1);
	ck_assert_uint_eq(VALUE(queue_pop_nowait(q)), 2);
	/* Closed and empty: NULL at once, every time. */
	ck_assert_ptr_null(queue_pop(q));
	ck_assert_ptr_null(queue_pop(q));
	ck_assert_ptr_null(queue_pop_nowait(q));
	queue_close(q); /* twice is harmless */
	ck_assert_int_eq(queue_push(q, ITEM(4)), ERR_CLOSED);
	queue_free(q);
}
END_TEST

START_TEST(test_close_full)
{
	struct queue *q = queue_new(1);

	ck_assert_int_eq(queue_push(q, ITEM(1)), 0);
	queue_close(q);
	ck_assert_int_eq(queue_push(q, ITEM(2)), ERR_CLOSED);
	ck_assert_uint_eq(VALUE(queue_pop(q)), 1);
	ck_assert_ptr_null(queue_pop(q));
	queue_free(q);
}
END_TEST

START_TEST(test_free_null)
{
	queue_free(NULL);
}
END_TEST

/* push_many appends in order after what is queued, across the ring's end,
 * and stops where the queue is full. */
START_TEST(test_push_many)
{
	struct queue *q = queue_new(5);
	void *items[] = { ITEM(10), ITEM(11), ITEM(12), ITEM(13), ITEM(14) };

	ck_assert_int_eq(queue_push(q, ITEM(1)), 0);
	ck_assert_int_eq(queue_push(q, ITEM(2)), 0);
	ck_assert_uint_eq(VALUE(queue_pop(q)), 1);
	ck_assert_uint_eq(queue_push_many(q, items, 0), 0);
	/* Room for 4 after item 2: 10..13 go in, 14 does not. */
	ck_assert_uint_eq(queue_push_many(q, items, 5), 4);
	ck_assert_uint_eq(queue_length(q), 5);
	ck_assert_uint_eq(VALUE(queue_pop(q)), 2);
	for (uintptr_t i = 10; i <= 13; i++)
		ck_assert_uint_eq(VALUE(queue_pop(q)), i);
	ck_assert_ptr_null(queue_pop_nowait(q));
	queue_close(q);
	ck_assert_uint_eq(queue_push_many(q, items, 2), 0);
	ck_assert_uint_eq(queue_length(q), 0);
	queue_free(q);
}
END_TEST

struct waiter {
	struct queue *q;
	void *got;
	volatile int done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->got = queue_pop(w->q);
	w->done = 1;
	return NULL;
}

/* A consumer blocked on an empty queue wakes for a push. */
START_TEST(test_pop_waits_for_push)
{
	struct waiter w = { queue_new(2), NULL, 0 };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, waiter_main, &w), 0);
	sleep_ms(50);
	ck_assert_int_eq(w.done, 0);
	ck_assert_int_eq(queue_push(w.q, ITEM(42)), 0);
	pthread_join(t, NULL);
	ck_assert_uint_eq(VALUE(w.got), 42);
	queue_free(w.q);
}
END_TEST

/* One push_many wakes every blocked consumer that it has an item for. */
START_TEST(test_push_many_wakes_all)
{
	struct waiter w[3];
	pthread_t t[3];
	struct queue *q = queue_new(4);
	void *items[] = { ITEM(1), ITEM(2), ITEM(3) };
	uintptr_t sum = 0;

	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){ q, NULL, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, waiter_main, &w[i]), 0);
	}
	sleep_ms(50);
	ck_assert_uint_eq(queue_push_many(q, items, 3), 3);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		sum += VALUE(w[i].got);
	}
	ck_assert_uint_eq(sum, 6);
	queue_free(q);
}
END_TEST

/* Closing wakes every blocked consumer with NULL. */
START_TEST(test_close_wakes_all)
{
	struct waiter w[3];
	pthread_t t[3];
	struct queue *q = queue_new(2);

	for (int i = 0; i < 3; i++) {
		w[i] = (struct waiter){ q, ITEM(1), 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, waiter_main, &w[i]), 0);
	}
	sleep_ms(50);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(w[i].done, 0);
	queue_close(q);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_ptr_null(w[i].got);
	}
	queue_free(q);
}
END_TEST

#define NPRODUCERS 4
#define PER_PRODUCER 20000u

/* An item: producer in the high bits, 1-based sequence in the low 24. */
#define MAKE(p, n) ITEM(((uintptr_t)(p) << 24) | (n))
#define PRODUCER(v) ((unsigned)((v) >> 24))
#define SEQ(v) ((uint32_t)((v)&0xffffff))

struct producer {
	struct queue *q;
	unsigned index;
	unsigned full; /* ERR_FULL answers seen (retried) */
	int error;     /* any other answer */
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	for (uint32_t n = 1; n <= PER_PRODUCER; n++) {
		int rc;

		while ((rc = queue_push(p->q, MAKE(p->index, n))) == ERR_FULL) {
			p->full++;
			sched_yield();
		}
		if (rc)
			p->error = rc;
	}
	return NULL;
}

/* Starts the producers on q (capacity small enough to fill). */
static void start_producers(struct queue *q, struct producer *p, pthread_t *t)
{
	for (unsigned i = 0; i < NPRODUCERS; i++) {
		p[i] = (struct producer){ q, i + 1, 0, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, producer_main, &p[i]), 0);
	}
}

START_TEST(test_multi_producer_one_consumer)
{
	struct queue *q = queue_new(16);
	struct producer p[NPRODUCERS];
	pthread_t t[NPRODUCERS];
	uint32_t last[NPRODUCERS + 1] = { 0 };
	unsigned bad = 0;

	start_producers(q, p, t);
	for (uint32_t got = 0; got < NPRODUCERS * PER_PRODUCER; got++) {
		uintptr_t v = VALUE(queue_pop(q));
		unsigned who = PRODUCER(v);

		/* Each producer's items arrive in order, none lost or repeated. */
		if (who < 1 || who > NPRODUCERS || SEQ(v) != last[who] + 1)
			bad++;
		else
			last[who] = SEQ(v);
	}
	for (unsigned i = 0; i < NPRODUCERS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(p[i].error, 0);
		ck_assert_uint_eq(last[i + 1], PER_PRODUCER);
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_ptr_null(queue_pop_nowait(q));
	queue_free(q);
}
END_TEST

struct consumer {
	struct queue *q;
	uint8_t *seen; /* shared; each slot written by whoever popped it */
	unsigned bad;
	uint32_t count;
};

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	uint32_t last[NPRODUCERS + 1] = { 0 };
	void *item;

	while ((item = queue_pop(c->q))) {
		uintptr_t v = VALUE(item);
		unsigned who = PRODUCER(v);

		/* With several consumers each still sees a producer's items in order. */
		if (who < 1 || who > NPRODUCERS || SEQ(v) <= last[who] || SEQ(v) > PER_PRODUCER) {
			c->bad++;
			continue;
		}
		last[who] = SEQ(v);
		c->seen[(who - 1) * PER_PRODUCER + SEQ(v) - 1]++;
		c->count++;
	}
	return NULL;
}

/* The query pool's shape: several consumers, closed when producers finish. */
START_TEST(test_multi_producer_multi_consumer)
{
	struct queue *q = queue_new(8);
	struct producer p[NPRODUCERS];
	struct consumer c[2];
	pthread_t pt[NPRODUCERS], ct[2];
	uint8_t *seen = calloc(NPRODUCERS * PER_PRODUCER, 1);
	unsigned wrong = 0;

	for (int i = 0; i < 2; i++) {
		c[i] = (struct consumer){ q, seen, 0, 0 };
		ck_assert_int_eq(pthread_create(&ct[i], NULL, consumer_main, &c[i]), 0);
	}
	start_producers(q, p, pt);
	for (unsigned i = 0; i < NPRODUCERS; i++) {
		pthread_join(pt[i], NULL);
		ck_assert_int_eq(p[i].error, 0);
	}
	queue_close(q);
	for (int i = 0; i < 2; i++) {
		pthread_join(ct[i], NULL);
		ck_assert_uint_eq(c[i].bad, 0);
	}
	ck_assert_uint_eq(c[0].count + c[1].count, NPRODUCERS * PER_PRODUCER);
	for (uint32_t i = 0; i < NPRODUCERS * PER_PRODUCER; i++)
		wrong += seen[i] != 1;
	ck_assert_uint_eq(wrong, 0);
	free(seen);
	queue_free(q);
}
END_TEST

static Suite *queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("single thread");

	tcase_add_test(tc, test_fifo);
	tcase_add_test(tc, test_wrap_around);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_capacity_one);
	tcase_add_test(tc, test_close_drains);
	tcase_add_test(tc, test_close_full);
	tcase_add_test(tc, test_free_null);
	tcase_add_test(tc, test_push_many);
	suite_add_tcase(s, tc);
	tc = tcase_create("threads");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_pop_waits_for_push);
	tcase_add_test(tc, test_push_many_wakes_all);
	tcase_add_test(tc, test_close_wakes_all);
	tcase_add_test(tc, test_multi_producer_one_consumer);
	tcase_add_test(tc, test_multi_producer_multi_consumer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(queue_suite());
}
