/*
 * test_auth.c - checks the NIP-42 table of relayd/auth.c:
 *   - auth_add / auth_has / auth_any / auth_list / auth_forget for one
 *     connection: several pubkeys, a repeat is not added twice, the
 *     AUTH_MAX_PUBKEYS limit answers ERR_FULL, forget drops them all;
 *   - auth_first_challenge is true once per connection, and again after
 *     auth_forget; a noted Host or a challenge authenticates nobody;
 *   - two threads (a lane's two servers, relayd/fairq.h) adding, reading
 *     and forgetting different connections of one table at once leave
 *     exactly what each thread wrote (run under ThreadSanitizer by
 *     `make tsan`, which also reports a missing lock).
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../../common/err.h"
#include "../../relayd/auth.h"
#include "../support/suite.h"

static void key_of(uint8_t out[32], uint64_t conn_id, uint32_t i)
{
	memset(out, 0, 32);
	memcpy(out, &conn_id, sizeof(conn_id));
	memcpy(out + 8, &i, sizeof(i));
}

START_TEST(one_connection)
{
	struct auth_table *t = auth_table_new();
	uint8_t k[32], list[AUTH_MAX_PUBKEYS][32];

	ck_assert_ptr_nonnull(t);
	ck_assert(!auth_any(t, 7));
	for (uint32_t i = 0; i < AUTH_MAX_PUBKEYS; i++) {
		key_of(k, 7, i);
		ck_assert_int_eq(auth_add(t, 7, k), 0);
		ck_assert_int_eq(auth_add(t, 7, k), 0); /* a repeat: no second copy */
	}
	key_of(k, 7, AUTH_MAX_PUBKEYS);
	ck_assert_int_eq(auth_add(t, 7, k), ERR_FULL);
	ck_assert(!auth_has(t, 7, k));
	ck_assert_uint_eq(auth_list(t, 7, list), AUTH_MAX_PUBKEYS);
	key_of(k, 7, 3);
	ck_assert_mem_eq(list[3], k, 32);
	ck_assert(auth_has(t, 7, k));
	ck_assert(!auth_has(t, 8, k));
	ck_assert(auth_any(t, 7));
	auth_forget(t, 7);
	ck_assert(!auth_any(t, 7));
	ck_assert_uint_eq(auth_list(t, 7, list), 0);
	auth_table_free(t);
}
END_TEST

START_TEST(challenge_once_and_host)
{
	struct auth_table *t = auth_table_new();

	ck_assert(auth_first_challenge(t, 9));
	ck_assert(!auth_first_challenge(t, 9));
	ck_assert(auth_first_challenge(t, 10));
	ck_assert_int_eq(auth_note_host(t, 11, "relay.example.com"), 0);
	ck_assert(auth_first_challenge(t, 11));
	ck_assert(!auth_any(t, 9));
	ck_assert(!auth_any(t, 11));
	auth_forget(t, 9);
	ck_assert(auth_first_challenge(t, 9));
	auth_table_free(t);
}
END_TEST

#define CONNS_PER_THREAD 2000
#define ROUNDS 3

struct worker {
	struct auth_table *t;
	uint64_t first; /* this thread's connection ids: first, first + 1, ... */
	int mismatches;
};

/* Adds two pubkeys per connection, checks them, forgets every other
 * connection; ROUNDS times, so buckets are shared with the other thread's
 * connections while both insert and remove. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t k[32];

	for (int round = 0; round < ROUNDS; round++) {
		for (uint64_t c = 0; c < CONNS_PER_THREAD; c++) {
			uint64_t id = w->first + c;

			for (uint32_t i = 0; i < 2; i++) {
				key_of(k, id, i);
				if (auth_add(w->t, id, k) != 0)
					w->mismatches++;
			}
		}
		for (uint64_t c = 0; c < CONNS_PER_THREAD; c++) {
			uint64_t id = w->first + c;

			key_of(k, id, 1);
			if (!auth_has(w->t, id, k))
				w->mismatches++;
			if (round < ROUNDS - 1 || c % 2)
				auth_forget(w->t, id);
		}
	}
	return NULL;
}

START_TEST(two_threads_share_a_table)
{
	struct auth_table *t = auth_table_new();
	/* 4096 apart: each id shares its hash bucket (auth.c has 1024) with
	 * one of the other thread's. */
	struct worker w[2] = { { t, 1, 0 }, { t, 1 + 4096, 0 } };
	pthread_t th[2];
	uint8_t list[AUTH_MAX_PUBKEYS][32], k[32];

	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(w[0].mismatches, 0);
	ck_assert_int_eq(w[1].mismatches, 0);
	/* Left: the even-numbered c of each thread, with both pubkeys. */
	for (int i = 0; i < 2; i++) {
		for (uint64_t c = 0; c < CONNS_PER_THREAD; c++) {
			uint64_t id = w[i].first + c;
			uint32_t want = c % 2 ? 0 : 2;

			ck_assert_uint_eq(auth_list(t, id, list), want);
			if (want) {
				key_of(k, id, 0);
				ck_assert_mem_eq(list[0], k, 32);
			}
		}
	}
	auth_table_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_connection);
	tcase_add_test(tc, challenge_once_and_host);
	tcase_add_test(tc, two_threads_share_a_table);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
