/*
 * recent.h - the ids of the ephemeral events relayed lately, so that one
 * sent twice is answered "duplicate:" and delivered once.
 *
 * Ephemeral events (kinds 20000-29999) are never stored, so the database
 * cannot say that one came before; a client that retries, or publishes
 * through two connections, would have every subscriber receive it twice.
 * This remembers the last capacity ids or so: two generations of half
 * that each, the older dropped whole when the newer fills (no per-id
 * eviction, no clock).  Past that window a repeat is relayed again, as it
 * would be by a relay that never saw it.  Ids are hashed with SipHash under
 * a key from the kernel: a client grinding its own events' ids cannot pile
 * them into one probe chain.  One thread owns it (stored's rpc thread): no
 * lock.
 */
#ifndef STORED_RECENT_H
#define STORED_RECENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recent_ids;

/* A set remembering at least capacity / 2 and at most capacity ids (at
 * least 2), or NULL without memory. */
struct recent_ids *recent_ids_new(size_t capacity);
/* NULL-safe. */
void recent_ids_free(struct recent_ids *r);
/* Whether id was added lately. */
bool recent_ids_has(const struct recent_ids *r, const uint8_t id[32]);
/* Adds id (not already there: ask recent_ids_has() first), the older
 * generation dropped if the newer is full. */
void recent_ids_add(struct recent_ids *r, const uint8_t id[32]);

#endif
