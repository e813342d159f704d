/*
 * search_index.h - NIP-50's full-text index, in a database file of its own
 * written by a thread of its own.
 *
 * The index is search.db, next to relay.db.  Its indexer thread reads new
 * events from relay.db (attached read-only: no write lock there) and
 * writes only search.db.  SQLite lets one connection write a database at a
 * time, so a separate file means the writer never waits for the indexer
 * (bench/RESULTS.md, items 29 and 31).
 *
 * Deleted events: every way an event leaves relay.db (replaced, deleted,
 * expired, vanished, removed by an operator) runs on the writer's
 * connection, whose trigger logs the event's seq in relay.db's search_gone,
 * in the same transaction as the delete, and notes it in the watermark so
 * that the commit wakes the indexer (idle, it sleeps).  The indexer removes
 * those seqs' text from search.db, records how far it got in search.db, and
 * the writer then prunes the log up to there.  A search never shows a
 * deleted event meanwhile: it joins the index with the events table.
 *
 * A search never misses what was acknowledged: the searcher waits until the
 * index covers every event its answer may include (search_watermark.h).
 * A crash loses nothing: search.db records how far it has indexed in the
 * same transaction as the text.  The index is derived data: a search.db
 * that is missing, belongs to another relay.db or is ahead of it is
 * rebuilt from the events, in the background.
 */
#ifndef STORED_SEARCH_INDEX_H
#define STORED_SEARCH_INDEX_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "search_watermark.h"

/* search.db's path for the events database at db_path (same directory). */
void search_index_path(char *out, size_t size, const char *db_path);

/*
 * On the writer's connection, after the schema exists: logs every deleted
 * event's seq in search_gone (a TEMP trigger: only this connection deletes
 * events) and tells wm, whose next search_watermark_committed() wakes the
 * indexer.  Returns 0 or ERR_DB (logged).
 */
int search_index_track_deletions(sqlite3 *db, struct search_watermark *wm);
/* Inside the writer's open transaction: prunes search_gone up to what the
 * index has applied, once that moved past *pruned.  Returns 0 or ERR_DB. */
int search_index_prune_gone(sqlite3 *db, struct search_watermark *wm, int64_t *pruned);
/* With search = 0, on the writer's connection: removes search.db (its text
 * would outlive deletions nobody applies) and empties search_gone.  Returns
 * 0 or ERR_DB. */
int search_index_remove(sqlite3 *db, const char *index_path);

struct search_index;

/*
 * Opens (creating or rebuilding, see above) the index at index_path for the
 * events in db_path, and publishes where it stands to wm.  batch and
 * delay_ms as the config keys search_index_batch and search_index_delay_ms.
 * NULL on failure (logged).
 */
struct search_index *search_index_open(const char *db_path, const char *index_path,
				       struct search_watermark *wm, uint32_t batch,
				       uint32_t delay_ms);
/* Stops the thread if it runs, closes the index, and releases searchers
 * waiting for it. */
void search_index_close(struct search_index *x);
/* Runs the indexer on a thread of its own at the given nice value (prio.h).
 * Returns 0 or ERR_NOMEM. */
int search_index_start(struct search_index *x, int nice);
/* Milliseconds until the next run is due (0: now; -1: not until the writer
 * commits new events or a deletion). */
int search_index_due_in_ms(struct search_index *x);
/* One run, in one transaction of search.db: indexes up to batch new events
 * and removes the text of every event logged as gone, then publishes the
 * new position.  Returns 0 or ERR_DB (nothing changed; retried later). */
int search_index_run(struct search_index *x);

#endif
