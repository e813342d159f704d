/*
 * event_sig.c - BIP-340 Schnorr signature checks (see event_sig.h).
 *
 * Owns the libsecp256k1 context of one verifier.  Since libsecp256k1 0.2.0
 * every context can verify and creating one is the expensive step, so it
 * happens once per verifier; verification itself only reads the context.
 */
#include "event_sig.h"

#include <stdlib.h>

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "err.h"
#include "event.h"

struct sig_verifier {
	secp256k1_context *ctx;
};

struct sig_verifier *sig_verifier_new(void)
{
	struct sig_verifier *v = malloc(sizeof(*v));

	if (!v)
		return NULL;
	v->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (!v->ctx) {
		free(v);
		return NULL;
	}
	return v;
}

void sig_verifier_free(struct sig_verifier *v)
{
	if (!v)
		return;
	secp256k1_context_destroy(v->ctx);
	free(v);
}

int sig_verify(struct sig_verifier *v, const uint8_t msg[32], const uint8_t pubkey[32],
	       const uint8_t sig[64])
{
	secp256k1_xonly_pubkey pk;

	if (!secp256k1_xonly_pubkey_parse(v->ctx, &pk, pubkey))
		return ERR_SIG;
	if (!secp256k1_schnorrsig_verify(v->ctx, sig, msg, 32, &pk))
		return ERR_SIG;
	return 0;
}

int sig_verify_event(struct sig_verifier *v, const struct event *ev)
{
	return sig_verify(v, ev->id, ev->pubkey, ev->sig);
}
