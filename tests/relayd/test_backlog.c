/*
 * test_backlog.c - checks relayd/backlog.c against a fake nng send buffer
 * that takes a set number of messages and then refuses (as NONBLOCK sends
 * do when it is full): every message sent arrives exactly once and in the
 * order sent, whatever waited; requests past the cap are refused while
 * control messages wait; a closed backlog refuses and holds nothing; the
 * HELLO of backlog_open() goes ahead of everything, and one nng refuses
 * for good closes the backlog; *woke is set exactly
 * when the backlog begins to hold something.  A threaded case (run under
 * TSan in CI) has four senders and a pump racing.
 */
#include <check.h>
#include <nng/nng.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../relayd/backlog.h"
#include "../support/suite.h"

/* The fake buffer: takes up to room messages, recording their numbers. */
struct sink {
	pthread_mutex_t lock;
	size_t room;
	bool broken;         /* refuse for good instead */
	uint32_t *got;
	size_t ngot, cap;
};

static int sink_try(void *arg, nng_msg *msg)
{
	struct sink *k = arg;
	uint32_t n;
	int rc = 0;

	pthread_mutex_lock(&k->lock);
	if (k->broken) {
		rc = ERR_NNG;
	} else if (k->room == 0) {
		rc = ERR_FULL;
	} else {
		k->room--;
		ck_assert_uint_eq(nng_msg_len(msg), sizeof(n));
		memcpy(&n, nng_msg_body(msg), sizeof(n));
		if (k->ngot == k->cap) {
			k->cap = k->cap ? 2 * k->cap : 1024;
			k->got = realloc(k->got, k->cap * sizeof(*k->got));
			ck_assert_ptr_nonnull(k->got);
		}
		k->got[k->ngot++] = n;
		nng_msg_free(msg); /* taken */
	}
	pthread_mutex_unlock(&k->lock);
	return rc;
}

static void sink_room(struct sink *k, size_t room)
{
	pthread_mutex_lock(&k->lock);
	k->room = room;
	pthread_mutex_unlock(&k->lock);
}

static nng_msg *numbered(uint32_t n)
{
	nng_msg *msg;

	ck_assert_int_eq(nng_msg_alloc(&msg, 0), 0);
	ck_assert_int_eq(nng_msg_append(msg, &n, sizeof(n)), 0);
	return msg;
}

static struct sink *sink_new(size_t room)
{
	struct sink *k = calloc(1, sizeof(*k));

	ck_assert_ptr_nonnull(k);
	pthread_mutex_init(&k->lock, NULL);
	k->room = room;
	return k;
}

static void sink_free(struct sink *k)
{
	pthread_mutex_destroy(&k->lock);
	free(k->got);
	free(k);
}

static void open_with_hello(struct backlog *b, uint32_t hello, bool expect_woke)
{
	bool woke;

	ck_assert_int_eq(backlog_open(b, numbered(hello), &woke), 0);
	ck_assert(woke == expect_woke);
}

START_TEST(test_order_and_caps)
{
	struct sink *k = sink_new(3);
	struct backlog b;
	bool woke;

	backlog_init(&b, sink_try, k);
	/* Closed: refused, nothing kept. */
	ck_assert_int_eq(backlog_send(&b, numbered(99), true, 10, &woke), ERR_CLOSED);
	ck_assert_uint_eq(backlog_count(&b), 0);
	open_with_hello(&b, 1000, false);
	/* Two more fit; the fourth message waits and wakes. */
	ck_assert_int_eq(backlog_send(&b, numbered(1), false, 2, &woke), 0);
	ck_assert(!woke);
	ck_assert_int_eq(backlog_send(&b, numbered(2), false, 2, &woke), 0);
	ck_assert(!woke);
	ck_assert_int_eq(backlog_send(&b, numbered(3), false, 2, &woke), 0);
	ck_assert(woke);
	ck_assert_int_eq(backlog_send(&b, numbered(4), true, 2, &woke), 0);
	ck_assert(!woke); /* it held something already */
	ck_assert_int_eq(backlog_send(&b, numbered(5), false, 2, &woke), 0);
	/* Two requests wait: the next is refused, a control message is not. */
	ck_assert_int_eq(backlog_send(&b, numbered(6), false, 2, &woke), ERR_FULL);
	ck_assert_int_eq(backlog_send(&b, numbered(7), true, 2, &woke), 0);
	ck_assert_uint_eq(backlog_count(&b), 4);
	/* With max 0 a request never waits, even behind control messages. */
	ck_assert_int_eq(backlog_send(&b, numbered(8), false, 0, &woke), ERR_FULL);
	/* Room for two: the pump sends the oldest two. */
	sink_room(k, 2);
	ck_assert(backlog_pump(&b));
	ck_assert_uint_eq(backlog_count(&b), 2);
	/* A send with room takes the waiting ones first, then itself. */
	sink_room(k, 10);
	ck_assert_int_eq(backlog_send(&b, numbered(9), false, 0, &woke), 0);
	ck_assert(!backlog_pump(&b));
	{
		static const uint32_t want[] = { 1000, 1, 2, 3, 4, 5, 7, 9 };

		ck_assert_uint_eq(k->ngot, sizeof(want) / sizeof(want[0]));
		for (size_t i = 0; i < k->ngot; i++)
			ck_assert_uint_eq(k->got[i], want[i]);
	}
	backlog_destroy(&b);
	sink_free(k);
}
END_TEST

/* A new link: what waited for the old one is dropped; the HELLO goes
 * first even when nng has no room for it yet. */
START_TEST(test_close_and_reopen)
{
	struct sink *k = sink_new(0);
	struct backlog b;
	bool woke;

	backlog_init(&b, sink_try, k);
	open_with_hello(&b, 1000, true); /* no room: the HELLO waits, and wakes */
	for (uint32_t i = 1; i <= 5; i++)
		ck_assert_int_eq(backlog_send(&b, numbered(i), i % 2, 100, &woke), 0);
	ck_assert_uint_eq(backlog_close(&b), 6);
	ck_assert_uint_eq(backlog_count(&b), 0);
	ck_assert_int_eq(backlog_send(&b, numbered(6), true, 100, &woke), ERR_CLOSED);
	open_with_hello(&b, 2000, true);
	ck_assert_int_eq(backlog_send(&b, numbered(7), true, 100, &woke), 0);
	sink_room(k, 100);
	ck_assert(!backlog_pump(&b));
	ck_assert_uint_eq(k->ngot, 2);
	ck_assert_uint_eq(k->got[0], 2000);
	ck_assert_uint_eq(k->got[1], 7);
	/* A message nng refuses for good is dropped, not kept at the head. */
	sink_room(k, 0);
	ck_assert_int_eq(backlog_send(&b, numbered(8), true, 100, &woke), 0);
	ck_assert_int_eq(backlog_send(&b, numbered(9), true, 100, &woke), 0);
	k->broken = true;
	ck_assert(!backlog_pump(&b));
	ck_assert_uint_eq(backlog_count(&b), 0);
	ck_assert_int_eq(backlog_send(&b, numbered(10), true, 100, &woke), ERR_NNG);
	ck_assert(backlog_is_open(&b));
	/* A HELLO waiting at the head that nng then refuses for good closes
	 * the backlog: nothing may reach stored without it. */
	k->broken = false;
	backlog_close(&b);
	open_with_hello(&b, 3000, true);
	ck_assert_int_eq(backlog_send(&b, numbered(11), true, 100, &woke), 0);
	k->broken = true;
	ck_assert(!backlog_pump(&b));
	ck_assert(!backlog_is_open(&b));
	ck_assert_uint_eq(backlog_count(&b), 0);
	ck_assert_int_eq(backlog_send(&b, numbered(12), true, 100, &woke), ERR_CLOSED);
	ck_assert_uint_eq(k->ngot, 2); /* 3000 and 11 never went */
	backlog_destroy(&b);
	sink_free(k);
}
END_TEST

/* Four senders (numbers tagged by sender) and a pump opening the sink's
 * room a little at a time: each sender's messages arrive once, in order. */
#define SENDERS 4
#define PER_SENDER 20000

struct race {
	struct backlog *b;
	uint32_t sender;
};

static void *race_sender(void *arg)
{
	struct race *rc = arg;
	bool woke;

	for (uint32_t i = 0; i < PER_SENDER; i++)
		ck_assert_int_eq(backlog_send(rc->b, numbered(rc->sender << 24 | i), i % 3 == 0,
					      1000000, &woke),
				 0);
	return NULL;
}

START_TEST(test_threads)
{
	struct sink *k = sink_new(0);
	struct backlog b;
	pthread_t t[SENDERS];
	struct race rc[SENDERS];
	uint32_t next[SENDERS] = { 0 };

	backlog_init(&b, sink_try, k);
	open_with_hello(&b, 0xff000000u, true);
	for (uint32_t i = 0; i < SENDERS; i++) {
		rc[i] = (struct race){ &b, i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_sender, &rc[i]), 0);
	}
	for (int round = 0; round < 200000; round++) {
		size_t got;

		sink_room(k, 7);
		backlog_pump(&b);
		pthread_mutex_lock(&k->lock);
		got = k->ngot;
		pthread_mutex_unlock(&k->lock);
		if (got >= 1 + SENDERS * PER_SENDER)
			break;
	}
	for (uint32_t i = 0; i < SENDERS; i++)
		pthread_join(t[i], NULL);
	sink_room(k, SIZE_MAX);
	ck_assert(!backlog_pump(&b));
	ck_assert_uint_eq(k->ngot, 1 + SENDERS * PER_SENDER);
	ck_assert_uint_eq(k->got[0], 0xff000000u);
	for (size_t i = 1; i < k->ngot; i++) {
		uint32_t sender = k->got[i] >> 24, n = k->got[i] & 0xffffff;

		ck_assert_uint_lt(sender, SENDERS);
		ck_assert_uint_eq(n, next[sender]);
		next[sender]++;
	}
	backlog_destroy(&b);
	sink_free(k);
}
END_TEST

static Suite *backlog_suite(void)
{
	Suite *s = suite_create("backlog");
	TCase *tc = tcase_create("backlog");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_order_and_caps);
	tcase_add_test(tc, test_close_and_reopen);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(backlog_suite());
}
