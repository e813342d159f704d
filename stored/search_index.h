/*
 * search_index.h - NIP-50's full-text index, in a database file of its own
 * written by a thread of its own.
 *
 * SQLite lets one connection write a database at a time.  When the index
 * lived in the events' file, the writer added the text of the last second's
 * events in one transaction every second, and every live commit waited for
 * it: 7-17 ms each second, 25-32 ms when FTS5 merged its segments, which
 * was the fan-out tail (bench/RESULTS.md, items 29 and 31).  Now the index
 * is search.db, next to relay.db, and its indexer thread reads new events
 * from relay.db (attached read-only: no write lock there) and writes only
 * search.db, so the writer never waits for it.
 *
 * Deleted events: every way an event leaves relay.db (replaced, deleted,
 * expired, vanished, removed by an operator) runs on the writer's
 * connection, whose trigger logs the event's seq in relay.db's search_gone,
 * in the same transaction as the delete.  The indexer removes those seqs'
 * text from search.db, records how far it got in search.db, and the writer
 * then prunes the log up to there.  A search never shows a deleted event
 * meanwhile: it joins the index with the events table.
 *
 * A search never misses what was acknowledged: the searcher waits until the
 * index covers every event its answer may include (search_watermark_want,
 * search_watermark_wait).  Nothing is lost by a crash: search.db records how
 * far it has indexed in the same transaction as the text, and the index is
 * derived data: a search.db that is missing, belongs to another relay.db or
 * is ahead of it is rebuilt from the events, in the background.
 */
#ifndef STORED_SEARCH_INDEX_H
#define STORED_SEARCH_INDEX_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the writer, the indexer and searchers share; lives in struct stored. */
struct search_watermark {
	pthread_mutex_t lock;
	pthread_cond_t advanced; /* searchers wait for indexed to grow */
	pthread_cond_t work;     /* the indexer waits for something to do */
	int64_t committed;       /* the highest seq committed (the writer) */
	int64_t indexed;         /* every event with seq <= indexed is searchable */
	int64_t wanted;          /* a searcher waits for indexed >= wanted */
	int64_t gone_done;       /* search_gone ids the index has applied */
	int64_t pending_since_ms; /* when committed first went past indexed */
	int64_t wake_lag;        /* a commit leaving this many unindexed wakes the indexer */
	bool ready;              /* an indexer keeps the index (search = 1) */
	bool stop;               /* the indexer thread is to end */
};

/* Returns 0 or an errno value from pthread. */
int search_watermark_init(struct search_watermark *wm);
void search_watermark_destroy(struct search_watermark *wm);
/* The searcher's half: true at once if the index covers seq (0: whatever
 * is committed now); otherwise records seq as wanted, wakes the indexer and
 * returns false, and the caller calls search_watermark_wait. */
bool search_watermark_want(struct search_watermark *wm, int64_t *seq);
/* Waits up to timeout_ms for the index to cover seq; true if it does. */
bool search_watermark_wait(struct search_watermark *wm, int64_t seq, int timeout_ms);
/* Events committed whose text the index does not have yet (0 with
 * search = 0), for /metrics and the admin socket. */
int64_t search_watermark_lag(struct search_watermark *wm);
/* The writer's half, after each commit: the highest seq it stored (0 if
 * none).  Wakes the indexer when its batch is full (or delay_ms is 0). */
void search_watermark_committed(struct search_watermark *wm, int64_t last_seq);

/* search.db's path for the events database at db_path (same directory). */
void search_index_path(char *out, size_t size, const char *db_path);

/*
 * On the writer's connection, after the schema exists: logs every deleted
 * event's seq in search_gone (a TEMP trigger: only this connection deletes
 * events) and attaches search.db read-only as "search", for operators'
 * jobs that match by search.  Returns 0 or ERR_DB (logged).
 */
int search_index_attach_writer(sqlite3 *db, const char *index_path);
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
/* Milliseconds until the next run is due (0: now). */
int search_index_due_in_ms(struct search_index *x);
/* One run, in one transaction of search.db: indexes up to batch new events
 * and removes the text of every event logged as gone, then publishes the
 * new position.  Returns 0 or ERR_DB (nothing changed; retried later). */
int search_index_run(struct search_index *x);

#endif
