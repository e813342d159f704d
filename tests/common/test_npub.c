/*
 * test_npub.c - checks common/npub.c: NIP-19's own example key, uppercase,
 * hex passing through, and refusals (another prefix, mixed case, a changed
 * character, a wrong length, a foreign character).
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "../../common/err.h"
#include "../../common/hex.h"
#include "../../common/npub.h"
#include "../support/suite.h"

/* The example in NIP-19. */
static const char example_npub[] = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg";
static const char example_hex[] = "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e";

START_TEST(test_nip19_example)
{
	uint8_t key[32];
	char hex[65];

	ck_assert_int_eq(npub_decode(example_npub, key), 0);
	hex_encode(key, sizeof(key), hex);
	ck_assert_str_eq(hex, example_hex);
	ck_assert_int_eq(npub_to_hex(example_npub, hex), 0);
	ck_assert_str_eq(hex, example_hex);
}
END_TEST

START_TEST(test_uppercase_and_hex)
{
	char upper[sizeof(example_npub)], hex[65];

	for (size_t i = 0; i < sizeof(example_npub); i++)
		upper[i] = (char)(example_npub[i] >= 'a' && example_npub[i] <= 'z' ? example_npub[i] - 32
										  : example_npub[i]);
	ck_assert_int_eq(npub_to_hex(upper, hex), 0);
	ck_assert_str_eq(hex, example_hex);
	ck_assert_int_eq(npub_to_hex(example_hex, hex), 0);
	ck_assert_str_eq(hex, example_hex);
}
END_TEST

START_TEST(test_refused)
{
	char text[sizeof(example_npub)], hex[65];
	uint8_t key[32];

	ck_assert_int_eq(npub_to_hex("", hex), ERR_INVAL);
	ck_assert_int_eq(npub_to_hex("npub1", hex), ERR_INVAL);
	ck_assert_int_eq(npub_to_hex("not a key", hex), ERR_INVAL);
	ck_assert_int_eq(npub_to_hex("7E7E9C42A91BFEF19FA929E5FDA1B72E0EBC1A4C1141673E2794234D86ADDF4E", hex),
			 ERR_INVAL);
	/* A changed character breaks the checksum. */
	memcpy(text, example_npub, sizeof(text));
	text[20] = text[20] == 'q' ? 'p' : 'q';
	ck_assert_int_eq(npub_decode(text, key), ERR_INVAL);
	/* Mixed case, and a character bech32 leaves out ('b'). */
	memcpy(text, example_npub, sizeof(text));
	text[10] = 'S';
	ck_assert_int_eq(npub_decode(text, key), ERR_INVAL);
	memcpy(text, example_npub, sizeof(text));
	text[10] = 'b';
	ck_assert_int_eq(npub_decode(text, key), ERR_INVAL);
	/* nsec is a secret key, never a pubkey. */
	memcpy(text, example_npub, sizeof(text));
	memcpy(text, "nsec", 4);
	ck_assert_int_eq(npub_decode(text, key), ERR_INVAL);
	/* One character short. */
	memcpy(text, example_npub, sizeof(text));
	text[sizeof(text) - 2] = '\0';
	ck_assert_int_eq(npub_decode(text, key), ERR_INVAL);
}
END_TEST

static Suite *npub_suite(void)
{
	Suite *s = suite_create("npub");
	TCase *tc = tcase_create("npub");

	tcase_add_test(tc, test_nip19_example);
	tcase_add_test(tc, test_uppercase_and_hex);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(npub_suite());
}
