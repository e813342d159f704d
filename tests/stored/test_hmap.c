/*
 * test_hmap.c - checks stored/hmap.c: SipHash against the published
 * vectors, the map's contract, and random operations against a plain array.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../stored/hmap.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

/* The SipHash paper's key 00 01 .. 0f. */
#define SIP_K0 UINT64_C(0x0706050403020100)
#define SIP_K1 UINT64_C(0x0f0e0d0c0b0a0908)

static struct splitmix rng;

START_TEST(test_siphash_vectors)
{
	uint8_t msg[15];

	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	ck_assert_uint_eq(hmap_siphash(SIP_K0, SIP_K1, msg, 0), UINT64_C(0x726fdb47dd0e0e31));
	ck_assert_uint_eq(hmap_siphash(SIP_K0, SIP_K1, msg, 15), UINT64_C(0xa129ca6149be45e5));
	ck_assert_uint_ne(hmap_siphash(SIP_K0, SIP_K1 ^ 1, msg, 15),
			  UINT64_C(0xa129ca6149be45e5));
}
END_TEST

START_TEST(test_empty)
{
	struct hmap m;
	size_t pos = 0;

	hmap_init(&m, 1, 2);
	ck_assert_uint_eq(hmap_count(&m), 0);
	ck_assert_ptr_null(hmap_get(&m, "x", 1));
	ck_assert_ptr_null(hmap_remove(&m, "x", 1));
	ck_assert_ptr_null(hmap_next(&m, &pos));
	hmap_free(&m);
	hmap_free(&m);
}
END_TEST

START_TEST(test_put_get_replace)
{
	struct hmap m;
	char key1[] = "alpha", key2[] = "alpha";
	int a, b, c;

	hmap_init(&m, 1, 2);
	ck_assert_int_eq(hmap_put(&m, key1, 5, &a), 0);
	ck_assert_int_eq(hmap_put(&m, "beta", 4, &b), 0);
	ck_assert_int_eq(hmap_put(&m, "", 0, &c), 0);
	ck_assert_uint_eq(hmap_count(&m), 3);
	ck_assert_ptr_eq(hmap_get(&m, "alpha", 5), &a);
	ck_assert_ptr_eq(hmap_get(&m, "", 0), &c);
	ck_assert_ptr_null(hmap_get(&m, "alph", 4));
	ck_assert_ptr_null(hmap_get(&m, "alpha\0", 6));

	/* Replacing swaps the borrowed key too: key1 may then change. */
	ck_assert_int_eq(hmap_put(&m, key2, 5, &b), 0);
	ck_assert_uint_eq(hmap_count(&m), 3);
	memset(key1, 'z', 5);
	ck_assert_ptr_eq(hmap_get(&m, "alpha", 5), &b);

	ck_assert_int_eq(hmap_put(&m, "gamma", 5, NULL), ERR_INVAL);
	ck_assert_ptr_eq(hmap_remove(&m, "alpha", 5), &b);
	ck_assert_ptr_null(hmap_remove(&m, "alpha", 5));
	ck_assert_uint_eq(hmap_count(&m), 2);
	hmap_free(&m);
}
END_TEST

START_TEST(test_reserve_then_put_does_not_grow)
{
	struct hmap m;
	static uint32_t keys[1000];
	struct hmap_slot *slots;

	hmap_init(&m, 3, 4);
	ck_assert_int_eq(hmap_reserve(&m, 1000), 0);
	slots = m.slots;
	for (uint32_t i = 0; i < 1000; i++) {
		keys[i] = i;
		ck_assert_int_eq(hmap_put(&m, &keys[i], sizeof(keys[i]), &keys[i]), 0);
	}
	ck_assert_ptr_eq(m.slots, slots);
	ck_assert_int_eq(hmap_reserve(&m, 10), 0); /* never shrinks */
	ck_assert_ptr_eq(m.slots, slots);
	hmap_free(&m);
}
END_TEST

START_TEST(test_shrinks_and_frees)
{
	struct hmap m;
	static uint32_t keys[4096];

	hmap_init(&m, 5, 6);
	for (uint32_t i = 0; i < 4096; i++) {
		keys[i] = i * 7919;
		ck_assert_int_eq(hmap_put(&m, &keys[i], 4, &keys[i]), 0);
	}
	ck_assert_uint_ge(m.cap, 4096);
	for (uint32_t i = 0; i < 4090; i++)
		ck_assert_ptr_eq(hmap_remove(&m, &keys[i], 4), &keys[i]);
	ck_assert_uint_le(m.cap, 64);
	for (uint32_t i = 4090; i < 4096; i++)
		ck_assert_ptr_eq(hmap_get(&m, &keys[i], 4), &keys[i]);
	for (uint32_t i = 4090; i < 4096; i++)
		ck_assert_ptr_eq(hmap_remove(&m, &keys[i], 4), &keys[i]);
	ck_assert_ptr_null(m.slots);
	ck_assert_uint_eq(m.cap, 0);
	hmap_free(&m);
}
END_TEST

/* Reference: key i of the universe is present iff present[i]. */
#define UNIVERSE 600

struct ukey {
	char bytes[12];
	size_t len;
};

static void universe_init(struct ukey *u)
{
	for (int i = 0; i < UNIVERSE; i++) {
		/* Varying lengths, shared prefixes, embedded NULs: (len, first
		 * byte) names i uniquely. */
		u[i].len = 1 + (size_t)(i % 11);
		memset(u[i].bytes, 0, sizeof(u[i].bytes));
		u[i].bytes[0] = (char)(i / 11);
		for (size_t j = 1; j < u[i].len; j++)
			u[i].bytes[j] = (j % 2) ? '\0' : 'a';
	}
	u[0].len = 0; /* and the empty key */
}

static int universe_same(const struct ukey *a, const struct ukey *b)
{
	return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

START_TEST(test_random_against_array)
{
	static struct ukey u[UNIVERSE];
	static char present[UNIVERSE];
	struct hmap m;
	size_t expect = 0;

	rng.state = 42;
	universe_init(u);
	for (int i = 0; i < UNIVERSE; i++)
		for (int j = 0; j < i; j++)
			ck_assert(!universe_same(&u[i], &u[j]));
	memset(present, 0, sizeof(present));
	/* A weak hash key still has to work: correctness must not depend on it. */
	hmap_init(&m, 0, 0);
	for (int op = 0; op < 200000; op++) {
		uint32_t i = splitmix_below(&rng, UNIVERSE);
		uint32_t what = splitmix_below(&rng, 10);

		/* Plain ifs: libcheck records every passing assertion, which is
		 * slow at this count. */
		if (what < 5) {
			if (hmap_put(&m, u[i].bytes, u[i].len, &u[i]) != 0)
				ck_abort_msg("op %d: put %u failed", op, i);
			expect += !present[i];
			present[i] = 1;
		} else if (what < 9) {
			if (hmap_remove(&m, u[i].bytes, u[i].len) != (present[i] ? &u[i] : NULL))
				ck_abort_msg("op %d: remove %u wrong", op, i);
			expect -= present[i];
			present[i] = 0;
		} else if (hmap_get(&m, u[i].bytes, u[i].len) != (present[i] ? &u[i] : NULL)) {
			ck_abort_msg("op %d: get %u wrong", op, i);
		}
		if (hmap_count(&m) != expect)
			ck_abort_msg("op %d: count %zu, want %zu", op, hmap_count(&m), expect);
	}
	for (int i = 0; i < UNIVERSE; i++)
		ck_assert_ptr_eq(hmap_get(&m, u[i].bytes, u[i].len), present[i] ? &u[i] : NULL);
	hmap_free(&m);
}
END_TEST

START_TEST(test_iteration_visits_each_once)
{
	static struct ukey u[UNIVERSE];
	static int seen[UNIVERSE];
	struct hmap m;
	size_t pos = 0, visits = 0;
	struct ukey *k;

	universe_init(u);
	memset(seen, 0, sizeof(seen));
	hmap_init(&m, 7, 8);
	for (int i = 0; i < UNIVERSE; i += 2)
		ck_assert_int_eq(hmap_put(&m, u[i].bytes, u[i].len, &u[i]), 0);
	while ((k = hmap_next(&m, &pos)) != NULL) {
		seen[k - u]++;
		visits++;
	}
	ck_assert_uint_eq(visits, UNIVERSE / 2);
	for (int i = 0; i < UNIVERSE; i++)
		ck_assert_int_eq(seen[i], i % 2 == 0);
	hmap_free(&m);
}
END_TEST

static Suite *hmap_suite(void)
{
	Suite *s = suite_create("hmap");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_siphash_vectors);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_put_get_replace);
	tcase_add_test(tc, test_reserve_then_put_does_not_grow);
	tcase_add_test(tc, test_shrinks_and_frees);
	tcase_add_test(tc, test_random_against_array);
	tcase_add_test(tc, test_iteration_visits_each_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(hmap_suite());
}
