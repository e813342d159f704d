/*
 * event_sig.h - BIP-340 signature checks with libsecp256k1.
 *
 * A struct sig_verifier owns a secp256k1 context and a cache of the public
 * keys it has parsed (2,048 slots).  It is not thread-safe: each thread that
 * checks signatures has its own.  A context is expensive to create, so one
 * serves every event, and an author's next events skip parsing the key.
 */
#ifndef COMMON_EVENT_SIG_H
#define COMMON_EVENT_SIG_H

#include <stdint.h>

struct event;
struct sig_verifier;

/* Creates a verifier; sig_verifier_free() frees it.  Returns NULL when out
 * of memory. */
struct sig_verifier *sig_verifier_new(void);
/* Frees it.  NULL-safe. */
void sig_verifier_free(struct sig_verifier *v);

/*
 * Checks a BIP-340 signature sig over the 32-byte message msg by the x-only
 * public key pubkey.  Returns 0 when it verifies, ERR_SIG when it does not
 * (including a pubkey that is not on the curve).
 */
int sig_verify(struct sig_verifier *v, const uint8_t msg[32], const uint8_t pubkey[32],
	       const uint8_t sig[64]);

/* sig_verify() of ev->sig over ev->id by ev->pubkey: 0 or ERR_SIG. */
int sig_verify_event(struct sig_verifier *v, const struct event *ev);

/* How many public keys v has parsed; every other check found its key in
 * v's cache.  For tests and benchmarks. */
unsigned long sig_verifier_parses(const struct sig_verifier *v);

#endif
