/*
 * ingest.h - deciding whether an event is stored, inside the writer's open
 * transaction.
 *
 * Regular events are stored unless the id exists.  Replaceable and
 * addressable events replace the version with the same (pubkey, kind[, d])
 * only if newer (created_at, then lowest id); an older or equal version is
 * answered as a duplicate and neither stored nor broadcast.  Events their
 * authors deleted or vanished from are refused (erase.h), and a stored
 * deletion or vanish request is carried out.  Ephemeral events never reach
 * this module.
 */
#ifndef STORED_INGEST_H
#define STORED_INGEST_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/event.h"

enum ingest_outcome {
	INGEST_STORED,     /* inserted; *seq is its commit order */
	INGEST_DUPLICATE,  /* this id is already stored */
	INGEST_SUPERSEDED, /* a newer version of this replaceable event is stored */
	INGEST_REFUSED,    /* taken back by its author (NIP-09/62); see *why */
	INGEST_FAILED,     /* SQLite failed; the event is not stored */
};

struct ingest;

/* Prepares the statements on db, the writer's connection, which must
 * outlive them.  Returns NULL without memory or when a prepare fails
 * (logged).  The text for NIP-50 is indexed later, by search_index.h. */
struct ingest *ingest_new(sqlite3 *db);
/* Finalizes them.  NULL-safe. */
void ingest_free(struct ingest *in);

/* Applies ev inside the caller's transaction.  Returns the outcome; on
 * INGEST_STORED *seq is set, on INGEST_REFUSED *why (a static message). */
enum ingest_outcome ingest_event(struct ingest *in, const struct event *ev, int64_t *seq,
				 const char **why);

#endif
