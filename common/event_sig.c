/*
 * event_sig.c - BIP-340 Schnorr signature checks (see event_sig.h).
 *
 * Owns the libsecp256k1 context of one verifier.  Since libsecp256k1 0.2.0
 * every context can verify and creating one is the expensive step, so it
 * happens once per verifier; verification itself only reads the context.
 * The cache of parsed public keys is written by every check, which is why
 * a verifier belongs to one thread.
 */
#include "event_sig.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "err.h"
#include "event.h"

/*
 * Public keys already parsed, by their 32 bytes.  Parsing one lifts x to a
 * point on the curve (a square root): 5.6-5.9 us of the ~42 us a check
 * takes on the bench machine, and a relay checks the same authors' events
 * again and again.  Direct-mapped on the key's first bytes (uniformly
 * random); a slot is used only when all 32 bytes match, so a collision,
 * crafted or not, costs a parse and nothing else.
 */
#define SIG_KEY_SLOTS 2048

struct sig_key_slot {
	uint8_t key[32];
	secp256k1_xonly_pubkey parsed;
	bool used;
};

struct sig_verifier {
	secp256k1_context *ctx;
	struct sig_key_slot *keys; /* SIG_KEY_SLOTS */
	unsigned long parses;
};

struct sig_verifier *sig_verifier_new(void)
{
	struct sig_verifier *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->keys = calloc(SIG_KEY_SLOTS, sizeof(*v->keys));
	v->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (!v->ctx || !v->keys) {
		sig_verifier_free(v);
		return NULL;
	}
	return v;
}

void sig_verifier_free(struct sig_verifier *v)
{
	if (!v)
		return;
	if (v->ctx)
		secp256k1_context_destroy(v->ctx);
	free(v->keys);
	free(v);
}

unsigned long sig_verifier_parses(const struct sig_verifier *v)
{
	return v->parses;
}

/* pubkey as libsecp256k1's point, from the cache or parsed into it; NULL
 * if it is not the x coordinate of a point on the curve. */
static const secp256k1_xonly_pubkey *sig_pubkey(struct sig_verifier *v, const uint8_t pubkey[32])
{
	struct sig_key_slot *slot = &v->keys[((unsigned)pubkey[0] | (unsigned)pubkey[1] << 8) %
					     SIG_KEY_SLOTS];

	if (slot->used && memcmp(slot->key, pubkey, sizeof(slot->key)) == 0)
		return &slot->parsed;
	v->parses++;
	slot->used = secp256k1_xonly_pubkey_parse(v->ctx, &slot->parsed, pubkey) != 0;
	if (!slot->used)
		return NULL;
	memcpy(slot->key, pubkey, sizeof(slot->key));
	return &slot->parsed;
}

int sig_verify(struct sig_verifier *v, const uint8_t msg[32], const uint8_t pubkey[32],
	       const uint8_t sig[64])
{
	const secp256k1_xonly_pubkey *pk = sig_pubkey(v, pubkey);

	if (!pk || !secp256k1_schnorrsig_verify(v->ctx, sig, msg, 32, pk))
		return ERR_SIG;
	return 0;
}

int sig_verify_event(struct sig_verifier *v, const struct event *ev)
{
	return sig_verify(v, ev->id, ev->pubkey, ev->sig);
}
