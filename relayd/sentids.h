/*
 * sentids.h - the stored events a subscription was sent from the database
 * while a history, resume or replay of it was unfinished.
 *
 * When stored restarts, the worker asks again for every history, resume and
 * replay it had not had to the end, and stored answers each in full: the
 * part a client already got would come twice.  So while a subscription has
 * such an answer coming, the worker notes the id of every stored event it
 * sends it; when the link comes up again it seals the notes, and the
 * answers asked again skip the events noted.  A subscription that is live
 * with nothing left to ask forgets them.
 *
 * An id is kept as its first 8 bytes: SHA-256 values, so two events share
 * one by chance with odds of about n / 2^64 per lookup, far below anything
 * else that can go wrong.  At most SENT_IDS_MAX are kept per subscription;
 * past that the rest may come twice after a restart.  Pure bookkeeping,
 * service thread only.
 */
#ifndef RELAYD_SENTIDS_H
#define RELAYD_SENTIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SENT_IDS_MAX 65536

/* Zeroed is empty. */
struct sent_ids {
	uint64_t *v;
	uint32_t n, cap;
	uint32_t sealed; /* v[0..sealed) is sorted and is what sent_ids_has looks in */
};

/* The id of a stored event from its canonical JSON (`{"id":"<64 hex>",…`,
 * as stored writes every event); false if json does not start that way. */
bool sent_ids_key(const char *json, size_t len, uint64_t *key);

/* Notes key; false if it could not be kept (out of memory, or full). */
bool sent_ids_add(struct sent_ids *s, uint64_t key);

/* The link to stored came up again: every key noted so far becomes one
 * that sent_ids_has finds (keys added later are found after the next). */
void sent_ids_seal(struct sent_ids *s);

/* True if key was noted before the last seal. */
bool sent_ids_has(const struct sent_ids *s, uint64_t key);

/* Forgets every key; s is empty again. */
void sent_ids_clear(struct sent_ids *s);

#endif
