/*
 * test_sentids.c - checks relayd/sentids.c: the key read from a stored
 * event's canonical JSON (and refused for anything else), that only keys
 * noted before a seal are found, that keys noted after one stay out until
 * the next, the cap, and a random run against a plain list.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../relayd/sentids.h"
#include "../support/suite.h"

START_TEST(the_key_is_the_ids_first_eight_bytes)
{
	const char *ok = "{\"id\":\"0123456789abcdef00112233445566778899aabbccddeeff0011223344556677\","
			 "\"pubkey\":\"x\"}";
	uint64_t key = 0;

	ck_assert(sent_ids_key(ok, strlen(ok), &key));
	ck_assert_uint_eq(key, UINT64_C(0x0123456789abcdef));
	/* Not stored's canonical form: no key, so the event is always sent. */
	ck_assert(!sent_ids_key("{\"pubkey\":\"x\",\"id\":\"00\"}", 24, &key));
	ck_assert(!sent_ids_key(ok, 40, &key)); /* cut short */
	ck_assert(!sent_ids_key("{\"id\":\"0123456789ABCDEF00112233445566778899aabbccddeeff0011223344556677\"}",
				73, &key)); /* uppercase is not an id */
}
END_TEST

START_TEST(only_keys_noted_before_the_seal_are_found)
{
	struct sent_ids s = { 0 };

	ck_assert(sent_ids_add(&s, 30));
	ck_assert(sent_ids_add(&s, 10));
	ck_assert(!sent_ids_has(&s, 10)); /* no restart yet: nothing is skipped */
	sent_ids_seal(&s);
	ck_assert(sent_ids_has(&s, 10) && sent_ids_has(&s, 30));
	ck_assert(!sent_ids_has(&s, 20));
	/* Sent by the answer asked again: kept, found after a second restart. */
	ck_assert(sent_ids_add(&s, 20));
	ck_assert(!sent_ids_has(&s, 20));
	sent_ids_seal(&s);
	ck_assert(sent_ids_has(&s, 20) && sent_ids_has(&s, 10) && sent_ids_has(&s, 30));
	sent_ids_clear(&s);
	ck_assert(!sent_ids_has(&s, 10));
	ck_assert_uint_eq(s.n, 0);
	sent_ids_seal(&s); /* empty: harmless */
	ck_assert(!sent_ids_has(&s, 0));
}
END_TEST

START_TEST(past_the_cap_keys_are_refused)
{
	struct sent_ids s = { 0 };

	for (uint64_t k = 1; k <= SENT_IDS_MAX; k++)
		if (!sent_ids_add(&s, k))
			ck_abort_msg("key %lu refused below the cap", (unsigned long)k);
	ck_assert(!sent_ids_add(&s, SENT_IDS_MAX + 1));
	sent_ids_seal(&s);
	ck_assert(sent_ids_has(&s, 1) && sent_ids_has(&s, SENT_IDS_MAX));
	ck_assert(!sent_ids_has(&s, SENT_IDS_MAX + 1));
	sent_ids_clear(&s);
}
END_TEST

START_TEST(random_keys_against_a_list)
{
	srand(11);
	for (int round = 0; round < 200; round++) {
		struct sent_ids s = { 0 };
		uint64_t noted[600];
		uint32_t n = (uint32_t)(rand() % 600);

		for (uint32_t i = 0; i < n; i++) {
			/* Few distinct values, so repeats and near misses occur. */
			noted[i] = (uint64_t)(rand() % 1000) << (rand() % 2 ? 54 : 0);
			ck_assert(sent_ids_add(&s, noted[i]));
		}
		sent_ids_seal(&s);
		for (uint64_t probe = 0; probe < 1000; probe++) {
			for (int shift = 0; shift <= 54; shift += 54) {
				uint64_t key = probe << shift;
				bool want = false;

				for (uint32_t i = 0; i < n && !want; i++)
					want = noted[i] == key;
				if (sent_ids_has(&s, key) != want)
					ck_abort_msg("round %d: key %llx %s", round,
						     (unsigned long long)key, want ? "missed" : "found");
			}
		}
		sent_ids_clear(&s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sentids");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, the_key_is_the_ids_first_eight_bytes);
	tcase_add_test(tc, only_keys_noted_before_the_seal_are_found);
	tcase_add_test(tc, past_the_cap_keys_are_refused);
	tcase_add_test(tc, random_keys_against_a_list);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
