/*
 * neg.h - negentropy protocol version 1 (NIP-77): range-based set
 * reconciliation over (created_at, id) items.
 *
 * One message is the version byte 0x61 followed by ranges.  A range is an
 * upper bound (a timestamp written as a delta from the previous bound of
 * the same message, 0 meaning infinity, then a length and that many bytes
 * of id prefix), a mode (Skip 0, Fingerprint 1, IdList 2) and its payload.
 * A fingerprint is the first 16 bytes of SHA-256 over the sum of the ids
 * (little-endian 256-bit numbers, mod 2^256) followed by varint(count).
 *
 * The functions here own no state between calls: a session is its sorted
 * item array, kept by the caller.  They allocate only into the caller's
 * buf and a scratch table for one IdList.
 */
#ifndef COMMON_NEG_H
#define COMMON_NEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define NEG_VERSION 0x61
#define NEG_ID_LEN 32
#define NEG_FP_LEN 16
/* The smallest frame limit: a message always has room for one range's
 * answer (at most 16 fingerprints or 31 ids) beside its margin. */
#define NEG_FRAME_MIN 4096

/* One record: its created_at (negative ones count as 0) and event id. */
struct neg_item {
	uint64_t ts;
	uint8_t id[NEG_ID_LEN];
};

/* Sorts items ascending by (ts, id), the order every function expects. */
void neg_sort(struct neg_item *items, size_t n);

/* Writes the fingerprint of the n items into out. */
void neg_fingerprint(const struct neg_item *items, size_t n, uint8_t out[NEG_FP_LEN]);

/* Told each id one side has and the other lacks (the initiator's view). */
typedef void (*neg_id_fn)(void *arg, const uint8_t id[NEG_ID_LEN]);

/* The initiator's first message over its n sorted items, appended to out.
 * frame_limit (at least NEG_FRAME_MIN) bounds it.  Returns 0 or ERR_NOMEM. */
int neg_initiate(const struct neg_item *items, size_t n, size_t frame_limit, struct buf *out);

/*
 * Answers one message (in, len bytes) against the n sorted items, appending
 * the reply to out (the caller resets it), at most about frame_limit bytes;
 * ranges that do not fit are answered in a later round.
 *
 * As the responder (initiator false) the reply is always sent, even when it
 * is the version byte alone; have and need are not called.  A message of
 * another protocol version 0x60..0x6f is answered with the single byte
 * NEG_VERSION (the spec's way to say which version it speaks).
 *
 * As the initiator, have(arg, id) is called for each id only this side
 * holds and need(arg, id) for each only the other side holds (either may be
 * NULL); *done is set when the reply is the version byte alone, meaning
 * reconciliation is over and nothing needs to be sent.
 *
 * Returns 0, ERR_INVAL (malformed: a bad version byte, unknown mode, a
 * bound prefix over 32 bytes, a truncated value, a varint over 64 bits or a
 * timestamp that overflows), ERR_VERSION (initiator: the peer speaks
 * another version) or ERR_NOMEM.
 */
struct neg_side {
	bool initiator;
	neg_id_fn have, need;
	void *arg;
	bool done;
};
int neg_reconcile(const struct neg_item *items, size_t n, const uint8_t *in, size_t len,
		  size_t frame_limit, struct neg_side *side, struct buf *out);

#endif
