/*
 * erase.h - events their authors took back: NIP-09 deletion requests and
 * NIP-62 requests to vanish, inside the writer's transaction.
 *
 * A kind 5 deletes the author's own events it names: `e` tags by id (never
 * a kind 5 or 62), `a` tags ("kind:pubkey:d") every version of that address
 * with created_at up to the request's.  Tombstones remember both, so a
 * deleted event sent again, or an older version of a deleted address, is
 * refused.  Another author's kind 5 changes nothing.
 * A kind 62 naming this relay (relayd sets EVENT_FLAG_VANISH_HERE) deletes
 * everything of its author up to its created_at, deletions included, and
 * the gift wraps (kind 1059) p-tagged to the author; such events are refused
 * from then on.
 * The operator's bans (table banned_pubkeys, written by `relayctl ban`) are
 * checked here too: every event of a banned author is refused.
 */
#ifndef STORED_ERASE_H
#define STORED_ERASE_H

#include <sqlite3.h>

#include "../common/event.h"

struct erase;

/* Prepares the statements on db, the writer's connection, which must
 * outlive them.  Returns NULL without memory or when a prepare fails
 * (logged). */
struct erase *erase_new(sqlite3 *db);
/* Finalizes them.  NULL-safe. */
void erase_free(struct erase *e);

/*
 * Whether ev was taken back before it arrived, or its author is banned.
 * Returns 0 (not refused), 1 (refused; *why is a static "blocked: ..."
 * message) or ERR_DB.
 */
int erase_refuses(struct erase *e, const struct event *ev, const char **why);

/* Carries out what ev asks (kind 5, or kind 62 with VANISH_HERE); other
 * events are left alone.  Returns 0 or ERR_DB. */
int erase_apply(struct erase *e, const struct event *ev);

#endif
