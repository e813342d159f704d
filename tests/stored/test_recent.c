/*
 * test_recent.c - checks stored/recent.c: an id is seen once added; ids are
 * remembered for at least half the capacity of later ones, and forgotten
 * once two generations have passed; random ids never collide.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../stored/recent.h"
#include "../support/suite.h"

/* A distinct id for n, spread over the hash bytes like a SHA-256. */
static void id_of(uint64_t n, uint8_t id[32])
{
	uint64_t x = n * 0x9E3779B97F4A7C15ull + 1;

	for (int i = 0; i < 32; i += 8) {
		x ^= x >> 31;
		x *= 0xBF58476D1CE4E5B9ull;
		memcpy(id + i, &x, 8);
	}
}

/* Whether id was there, adding it if not: how stored asks. */
static bool recent_ids_seen(struct recent_ids *r, const uint8_t id[32])
{
	if (recent_ids_has(r, id))
		return true;
	recent_ids_add(r, id);
	return false;
}

START_TEST(an_id_is_seen_the_second_time_only)
{
	struct recent_ids *r = recent_ids_new(16);
	uint8_t a[32], b[32];

	ck_assert_ptr_nonnull(r);
	id_of(1, a);
	id_of(2, b);
	ck_assert(!recent_ids_seen(r, a));
	ck_assert(recent_ids_seen(r, a));
	ck_assert(!recent_ids_seen(r, b));
	ck_assert(recent_ids_seen(r, a));
	ck_assert(recent_ids_seen(r, b));
	recent_ids_free(r);
}
END_TEST

/* With capacity c: after any id, at least c / 2 others can come and it is
 * still remembered; after 2 * c others it is forgotten. */
START_TEST(ids_are_kept_for_a_window_then_forgotten)
{
	enum { CAPACITY = 1000 };
	struct recent_ids *r = recent_ids_new(CAPACITY);
	uint8_t id[32];

	for (uint64_t first = 0; first < 3 * CAPACITY; first += 97) {
		for (uint64_t n = first; n <= first + CAPACITY / 2; n++) {
			id_of(n, id);
			recent_ids_seen(r, id);
		}
		id_of(first, id);
		ck_assert_msg(recent_ids_seen(r, id), "id %llu forgotten too soon",
			      (unsigned long long)first);
	}
	id_of(1000000, id);
	ck_assert(!recent_ids_seen(r, id));
	for (uint64_t n = 2000000; n < 2000000 + 2 * CAPACITY; n++) {
		uint8_t other[32];

		id_of(n, other);
		ck_assert(!recent_ids_seen(r, other));
	}
	ck_assert(!recent_ids_seen(r, id));
	recent_ids_free(r);
}
END_TEST

START_TEST(many_ids_through_a_small_set)
{
	struct recent_ids *r = recent_ids_new(64);
	uint8_t id[32];

	/* Each new id is new: no false "seen" however often the set turns. */
	for (uint64_t n = 0; n < 100000; n++) {
		id_of(n + 5000000, id);
		ck_assert(!recent_ids_seen(r, id));
	}
	recent_ids_free(r);
	recent_ids_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recent");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, an_id_is_seen_the_second_time_only);
	tcase_add_test(tc, ids_are_kept_for_a_window_then_forgotten);
	tcase_add_test(tc, many_ids_through_a_small_set);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
