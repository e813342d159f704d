/*
 * test_event_sig.c - checks common/event_sig.c: the official BIP-340 test
 * vectors, a sign-then-verify round trip with libsecp256k1, real Nostr
 * events, and the verifier's cache of parsed public keys (a key parsed
 * once; more keys than slots).
 *
 * The BIP-340 vectors are rows 0-14 of bip-0340/test-vectors.csv in the
 * bitcoin/bips repository (the final, even-y revision; later revisions add
 * rows for messages that are not 32 bytes, which Nostr never signs).  The Nostr events
 * were made with nostr-tools 2.x finalizeEvent() and the secret key
 * 0x0102...1f20, as described in test_event.c.
 */
#include <check.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/event_sig.h"
#include "../../common/hex.h"
#include "../support/suite.h"

static const struct bip340_vector {
	const char *seckey; /* "" for verification-only rows */
	const char *pubkey;
	const char *aux_rand;
	const char *msg;
	const char *sig;
	bool valid;
} bip340[] = {
	/* 0 */
	{ "0000000000000000000000000000000000000000000000000000000000000003",
	  "F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
	  "0000000000000000000000000000000000000000000000000000000000000000",
	  "0000000000000000000000000000000000000000000000000000000000000000",
	  "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA8215"
	  "25F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0",
	  true },
	/* 1 */
	{ "B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "0000000000000000000000000000000000000000000000000000000000000001",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE3341"
	  "8906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A",
	  true },
	/* 2 */
	{ "C90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B14E5C9",
	  "DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8",
	  "C87AA53824B4D7AE2EB035A2B5BBBCCC080E76CDC6D1692C4B0B62D798E6D906",
	  "7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C",
	  "5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1B"
	  "AB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7",
	  true },
	/* 3: test fails if msg is reduced modulo p or n */
	{ "0B432B2677937381AEF05BB02A66ECD012773062CF3FA2549E44F58ED2401710",
	  "25D1DFF95105F5253C4022F628A996AD3A0D95FBF21D468A1B33F8C160D8F517",
	  "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
	  "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
	  "7EB0509757E246F19449885651611CB965ECC1A187DD51B64FDA1EDC9637D5EC"
	  "97582B9CB13DB3933705B32BA982AF5AF25FD78881EBB32771FC5922EFC66EA3",
	  true },
	/* 4 */
	{ "",
	  "D69C3509BB99E412E68B0FE8544E72837DFA30746D8BE2AA65975F29D22DC7B9",
	  "",
	  "4DF3C3F68FCC83B27E9D42C90431A72499F17875C81A599B566C9889B9696703",
	  "00000000000000000000003B78CE563F89A0ED9414F5AA28AD0D96D6795F9C63"
	  "76AFB1548AF603B3EB45C9F8207DEE1060CB71C04E80F593060B07D28308D7F4",
	  true },
	/* 5: public key not on the curve */
	{ "",
	  "EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769"
	  "69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B",
	  false },
	/* 6: has_even_y(R) is false */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "FFF97BD5755EEEA420453A14355235D382F6472F8568A18B2F057A1460297556"
	  "3CC27944640AC607CD107AE10923D9EF7A73C643E166BE5EBEAFA34B1AC553E2",
	  false },
	/* 7: negated message */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "1FA62E331EDBC21C394792D2AB1100A7B432B013DF3F6FF4F99FCB33E0E1515F"
	  "28890B3EDB6E7189B630448B515CE4F8622A954CFE545735AAEA5134FCCDB2BD",
	  false },
	/* 8: negated s value */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769"
	  "961764B3AA9B2FFCB6EF947B6887A226E8D7C93E00C5ED0C1834FF0D0C2E6DA6",
	  false },
	/* 9: sG - eP is infinite (x(inf) taken as 0) */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "0000000000000000000000000000000000000000000000000000000000000000"
	  "123DDA8328AF9C23A94C1FEECFD123BA4FB73476F0D594DCB65C6425BD186051",
	  false },
	/* 10: sG - eP is infinite (x(inf) taken as 1) */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "0000000000000000000000000000000000000000000000000000000000000001"
	  "7615FBAF5AE28864013C099742DEADB4DBA87F11AC6754F93780D5A1837CF197",
	  false },
	/* 11: sig[0:32] is not an X coordinate on the curve */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "4A298DACAE57395A15D0795DDBFD1DCB564DA82B0F269BC70A74F8220429BA1D"
	  "69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B",
	  false },
	/* 12: sig[0:32] is equal to the field size */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F"
	  "69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B",
	  false },
	/* 13: sig[32:64] is equal to the curve order */
	{ "",
	  "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769"
	  "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141",
	  false },
	/* 14: public key exceeds the field size */
	{ "",
	  "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC30",
	  "",
	  "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
	  "6CFF5C3BA86C69EA4B7376F31A9BCB4F74C1976089B2D9963DA2E5543E177769"
	  "69E89B4C5564D00349106B8497785DD7D1D713A8AE82B32FA79D5F7FC407D39B",
	  false },
};

#define NBIP340 (sizeof(bip340) / sizeof(bip340[0]))

/* The vectors are uppercase; hex_decode() rightly wants lowercase. */
static void unhex(const char *text, uint8_t *out, size_t len)
{
	char lower[129];

	ck_assert_uint_eq(strlen(text), 2 * len);
	for (size_t i = 0; i < 2 * len; i++)
		lower[i] = (char)tolower((unsigned char)text[i]);
	ck_assert_int_eq(hex_decode(lower, 2 * len, out, len), 0);
}

START_TEST(test_bip340_verify)
{
	const struct bip340_vector *v = &bip340[_i];
	struct sig_verifier *ver = sig_verifier_new();
	uint8_t pk[32], msg[32], sig[64];

	ck_assert_ptr_nonnull(ver);
	unhex(v->pubkey, pk, 32);
	unhex(v->msg, msg, 32);
	unhex(v->sig, sig, 64);
	ck_assert_int_eq(sig_verify(ver, msg, pk, sig), v->valid ? 0 : ERR_SIG);
	sig_verifier_free(ver);
}
END_TEST

/* The rows with a secret key also pin the signer: libsecp256k1 with their
 * aux_rand reproduces their signatures, which then verify. */
START_TEST(test_bip340_sign)
{
	secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	struct sig_verifier *ver = sig_verifier_new();

	for (size_t i = 0; i < NBIP340; i++) {
		const struct bip340_vector *v = &bip340[i];
		uint8_t sk[32], pk[32], aux[32], msg[32], want[64], sig[64];
		secp256k1_keypair kp;

		if (!v->seckey[0])
			continue;
		unhex(v->seckey, sk, 32);
		unhex(v->pubkey, pk, 32);
		unhex(v->aux_rand, aux, 32);
		unhex(v->msg, msg, 32);
		unhex(v->sig, want, 64);
		ck_assert_int_eq(secp256k1_keypair_create(ctx, &kp, sk), 1);
		ck_assert_int_eq(secp256k1_schnorrsig_sign32(ctx, sig, msg, &kp, aux), 1);
		ck_assert_mem_eq(sig, want, 64);
		ck_assert_int_eq(sig_verify(ver, msg, pk, sig), 0);
	}
	sig_verifier_free(ver);
	secp256k1_context_destroy(ctx);
}
END_TEST

START_TEST(test_round_trip)
{
	secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	struct sig_verifier *ver = sig_verifier_new();
	uint8_t sk[32], msg[32], sig[64], pk[32];
	secp256k1_keypair kp;
	secp256k1_xonly_pubkey xpk;

	for (int i = 0; i < 32; i++) {
		sk[i] = (uint8_t)(i + 1);
		msg[i] = (uint8_t)(0xa0 + i);
	}
	ck_assert_int_eq(secp256k1_keypair_create(ctx, &kp, sk), 1);
	ck_assert_int_eq(secp256k1_keypair_xonly_pub(ctx, &xpk, NULL, &kp), 1);
	ck_assert_int_eq(secp256k1_xonly_pubkey_serialize(ctx, pk, &xpk), 1);
	ck_assert_int_eq(secp256k1_schnorrsig_sign32(ctx, sig, msg, &kp, NULL), 1);
	ck_assert_int_eq(sig_verify(ver, msg, pk, sig), 0);
	/* Any flipped bit in message, key or signature breaks it. */
	msg[5] ^= 0x10;
	ck_assert_int_eq(sig_verify(ver, msg, pk, sig), ERR_SIG);
	msg[5] ^= 0x10;
	sig[63] ^= 0x01;
	ck_assert_int_eq(sig_verify(ver, msg, pk, sig), ERR_SIG);
	sig[63] ^= 0x01;
	pk[0] ^= 0x80;
	ck_assert_int_eq(sig_verify(ver, msg, pk, sig), ERR_SIG);
	pk[0] ^= 0x80;
	ck_assert_int_eq(sig_verify(ver, msg, pk, sig), 0);
	sig_verifier_free(ver);
	secp256k1_context_destroy(ctx);
}
END_TEST

/* Two events signed by nostr-tools (key 0x0102...1f20). */
static const char *const nostr_events[] = {
	"{\"id\":\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":1700000000,\"kind\":1,\"tags\":[],\"content\":\"hello nostr\","
	"\"sig\":\"5ed9ef79ee5778a37c9b33870d516fa9b9801b5578907c688653506e9315d456"
	"74c466e816e0ddc0bf5a2796fc60cdf77dfbde7b2d72c90d6e6173f6dbf387f6\"}",
	"{\"id\":\"5d84e4a4661ec81a5a2418d1c491173e00a64a94f808680bae996dbc22d2bd0f\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":0,\"kind\":0,\"tags\":[],\"content\":\"{\\\"name\\\":\\\"alice\\\"}\","
	"\"sig\":\"06c756c5e82f6f6aabef6785ebde2adbe4062e5eb8393315763225ca1dafffc8"
	"a4b44c16ef7f513844bad397299b2519695d385bfed9b2a936dea45838574f3f\"}",
};

static void parse_event(const char *text, struct event *ev)
{
	cJSON *obj = cJSON_Parse(text);
	char reason[128];

	ck_assert_ptr_nonnull(obj);
	ck_assert_int_eq(event_parse(obj, NULL, ev, reason, sizeof(reason)), 0);
	cJSON_Delete(obj);
}

START_TEST(test_nostr_events)
{
	struct sig_verifier *ver = sig_verifier_new();
	struct event a, b;

	parse_event(nostr_events[0], &a);
	parse_event(nostr_events[1], &b);
	ck_assert_int_eq(sig_verify_event(ver, &a), 0);
	ck_assert_int_eq(sig_verify_event(ver, &b), 0);
	/* A valid signature over another event does not carry over. */
	memcpy(a.sig, b.sig, EVENT_SIG_LEN);
	ck_assert_int_eq(sig_verify_event(ver, &a), ERR_SIG);
	/* Nor does a signature to another key that is on the curve. */
	memset(b.pubkey, 0, EVENT_PUBKEY_LEN);
	b.pubkey[31] = 1; /* x = 1 is on the curve */
	ck_assert_int_eq(sig_verify_event(ver, &b), ERR_SIG);
	event_free(&a);
	event_free(&b);
	sig_verifier_free(ver);
}
END_TEST

/* The same author's next event takes the key from the verifier's cache. */
START_TEST(test_a_key_is_parsed_once)
{
	struct sig_verifier *ver = sig_verifier_new();
	struct event a, b;

	parse_event(nostr_events[0], &a);
	parse_event(nostr_events[1], &b); /* the same pubkey */
	ck_assert_uint_eq(sig_verifier_parses(ver), 0);
	ck_assert_int_eq(sig_verify_event(ver, &a), 0);
	ck_assert_int_eq(sig_verify_event(ver, &b), 0);
	ck_assert_int_eq(sig_verify_event(ver, &a), 0);
	ck_assert_uint_eq(sig_verifier_parses(ver), 1);
	/* A key not on the curve is refused each time it comes, parsed each
	 * time (nothing was cached for it), and a's key stays cached. */
	memset(b.pubkey, 0, EVENT_PUBKEY_LEN);
	b.pubkey[31] = 5; /* x = 5: x^3 + 7 has no square root mod p */
	{
		secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
		secp256k1_xonly_pubkey xpk;

		ck_assert_int_eq(secp256k1_xonly_pubkey_parse(ctx, &xpk, b.pubkey), 0);
		secp256k1_context_destroy(ctx);
	}
	ck_assert_int_eq(sig_verify_event(ver, &b), ERR_SIG);
	ck_assert_int_eq(sig_verify_event(ver, &b), ERR_SIG);
	ck_assert_uint_eq(sig_verifier_parses(ver), 3);
	ck_assert_int_eq(sig_verify_event(ver, &a), 0);
	ck_assert_uint_eq(sig_verifier_parses(ver), 3);
	event_free(&a);
	event_free(&b);
	sig_verifier_free(ver);
}
END_TEST

/* More keys than the cache has slots, so some must share one: each still
 * verifies its own signatures, again after the others, and never another
 * key's.  Keys are made from the secret keys 1..NKEYS. */
#define NKEYS 2100
START_TEST(test_more_keys_than_the_cache_holds)
{
	secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	struct sig_verifier *ver = sig_verifier_new();
	static uint8_t pk[NKEYS][32], sig[NKEYS][64];
	uint8_t msg[32];

	memset(msg, 0x5a, sizeof(msg));
	for (int i = 0; i < NKEYS; i++) {
		uint8_t sk[32] = { 0 };
		secp256k1_keypair kp;
		secp256k1_xonly_pubkey xpk;

		sk[30] = (uint8_t)((i + 1) >> 8);
		sk[31] = (uint8_t)(i + 1);
		ck_assert_int_eq(secp256k1_keypair_create(ctx, &kp, sk), 1);
		ck_assert_int_eq(secp256k1_keypair_xonly_pub(ctx, &xpk, NULL, &kp), 1);
		ck_assert_int_eq(secp256k1_xonly_pubkey_serialize(ctx, pk[i], &xpk), 1);
		ck_assert_int_eq(secp256k1_schnorrsig_sign32(ctx, sig[i], msg, &kp, NULL), 1);
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < NKEYS; i++) {
			ck_assert_int_eq(sig_verify(ver, msg, pk[i], sig[i]), 0);
			ck_assert_int_eq(sig_verify(ver, msg, pk[(i + 1) % NKEYS], sig[i]), ERR_SIG);
		}
	/* Every key was parsed at least once, and some more than once. */
	ck_assert_uint_gt(sig_verifier_parses(ver), NKEYS);
	sig_verifier_free(ver);
	secp256k1_context_destroy(ctx);
}
END_TEST

START_TEST(test_verifier_lifetime)
{
	struct sig_verifier *a = sig_verifier_new();
	struct sig_verifier *b = sig_verifier_new();

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	sig_verifier_free(a);
	sig_verifier_free(b);
	sig_verifier_free(NULL);
}
END_TEST

static Suite *event_sig_suite(void)
{
	Suite *s = suite_create("event_sig");
	TCase *tc = tcase_create("bip340");

	tcase_add_loop_test(tc, test_bip340_verify, 0, (int)NBIP340);
	tcase_add_test(tc, test_bip340_sign);
	tcase_add_test(tc, test_round_trip);
	suite_add_tcase(s, tc);
	tc = tcase_create("events");
	tcase_add_test(tc, test_nostr_events);
	tcase_add_test(tc, test_a_key_is_parsed_once);
	tcase_add_test(tc, test_more_keys_than_the_cache_holds);
	tcase_add_test(tc, test_verifier_lifetime);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(event_sig_suite());
}
