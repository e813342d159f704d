/*
 * nostr_sign.h - making signed Nostr events (NIP-01) for the load.
 *
 * A struct nostr_signer owns one libsecp256k1 context (per thread: it is not
 * shared).  Keys are derived from (seed, index) so a generated file can be
 * reproduced byte for byte: signatures use no auxiliary randomness, so they
 * are deterministic too.  The id is SHA-256 of
 * [0,"<pubkey>",<created_at>,<kind>,<tags>,"<content>"] serialized as NIP-01
 * says (common/jsonstr.h, the relay's own escaping).
 *
 * Tags are built as JSON text with struct nostr_tags; their values must not
 * hold control characters other than the seven NIP-01 escapes, so that the
 * hashed and the sent text are the same (nostr_tags_add refuses others).
 */
#ifndef BENCH_NOSTR_SIGN_H
#define BENCH_NOSTR_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include <secp256k1_extrakeys.h>

#include "../common/buf.h"

struct nostr_signer;

struct nostr_key {
	secp256k1_keypair pair;
	uint8_t pub[32];
	char pubhex[65];
};

/* The tags array being built; "[]" when nothing was added. */
struct nostr_tags {
	struct buf json;
	uint32_t count;
};

/* What an event says, before it is signed. */
struct nostr_draft {
	int64_t created_at;
	uint32_t kind;
	const struct nostr_tags *tags; /* NULL: no tags */
	const char *content;
	size_t content_len;
};

/* A new signer, or NULL without memory. */
struct nostr_signer *nostr_signer_new(void);

/* Frees it.  NULL-safe. */
void nostr_signer_free(struct nostr_signer *s);

/* Derives key number index of seed into *out.  Returns 0, or ERR_INVAL if
 * libsecp256k1 refuses (never for a valid context). */
int nostr_key_derive(struct nostr_signer *s, uint64_t seed, uint32_t index, struct nostr_key *out);

/* Empties t (keeping its memory). */
void nostr_tags_reset(struct nostr_tags *t);

/* Appends the tag [values[0], ..., values[n-1]].  Returns 0, ERR_INVAL for a
 * value with a control character NIP-01 does not escape, or ERR_NOMEM. */
int nostr_tags_add(struct nostr_tags *t, const char *const *values, int n);

/* Frees t's memory. */
void nostr_tags_free(struct nostr_tags *t);

/*
 * Appends the signed event object {"id",...,"sig"} (one line, no newline)
 * to out and writes its id into id.  Returns 0 or ERR_NOMEM (out keeps what
 * it had), ERR_INVAL if signing failed.
 */
int nostr_event_sign(struct nostr_signer *s, const struct nostr_key *k,
		     const struct nostr_draft *d, struct buf *out, uint8_t id[32]);

#endif
