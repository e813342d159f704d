/*
 * search_index.h - NIP-50's full-text index, written behind the events in
 * batches of its own.
 *
 * FTS5 writes a new segment for every transaction that adds text, and with
 * one or a few clients a commit holds only a handful of events: indexing
 * inside each commit was a quarter of what a small commit cost
 * (bench/RESULTS.md).  So the writer commits small batches of events
 * without their text and adds the text of everything committed since in
 * one transaction of its own, when search_index_batch events are waiting,
 * search_index_delay_ms after the first of them, or at once when a search
 * needs them.  A large commit (a flood) carries its own text and any that
 * waits, as before: there FTS5 costs no more inside the commit, and a
 * search during the flood waits for nothing.
 *
 * A search never misses what was acknowledged: before it runs, the searcher
 * waits until the index covers every event its answer may include
 * (writer_await_search in writer.h).  Nothing is lost by a crash either:
 * every event past the index's highest rowid is unindexed (text rows leave
 * only with their events), so at start the index resumes from there.
 */
#ifndef STORED_SEARCH_INDEX_H
#define STORED_SEARCH_INDEX_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/* What searchers and the writer share; lives in struct stored. */
struct search_watermark {
	pthread_mutex_t lock;
	pthread_cond_t advanced;
	int64_t committed; /* the highest seq committed */
	int64_t indexed;   /* every event with seq <= indexed is searchable */
	int64_t wanted;    /* a searcher waits for indexed >= wanted */
	bool ready;        /* the writer keeps this index (search = 1) */
};

/* Returns 0 or an errno value from pthread. */
int search_watermark_init(struct search_watermark *wm);
void search_watermark_destroy(struct search_watermark *wm);
/* The searcher's half: true at once if the index covers seq (0: whatever
 * is committed now); otherwise records seq as wanted and returns false, and
 * the caller wakes the writer and calls search_watermark_wait. */
bool search_watermark_want(struct search_watermark *wm, int64_t *seq);
/* Events committed whose text the index does not have yet (0 with
 * search = 0), for /metrics and the admin socket. */
int64_t search_watermark_lag(struct search_watermark *wm);
/* Waits up to timeout_ms for the index to cover seq; true if it does. */
bool search_watermark_wait(struct search_watermark *wm, int64_t seq, int timeout_ms);

struct search_index;

/*
 * The writer's half, on the writer's connection db.  batch and delay_ms as
 * the config keys search_index_batch and search_index_delay_ms; delay_ms 0
 * means the writer indexes inside each commit (ingest.h) and this only
 * catches up what an earlier run left unindexed.  Reads where the index
 * stands and publishes it to wm.  NULL on failure.
 */
struct search_index *search_index_new(sqlite3 *db, struct search_watermark *wm, uint32_t batch,
				      uint32_t delay_ms);
void search_index_free(struct search_index *x);

/*
 * Inside the writer's open transaction, before its COMMIT, with the number
 * of events it holds and the highest seq it stored: a commit of at least
 * SEARCH_INDEX_JOIN_EVENTS events, or one a search is waiting for, carries
 * the text of everything up to upto itself.  For a large commit FTS5
 * costs about as much inside it as in a batch of its own (bench/RESULTS.md,
 * item 17), and a search during a flood then waits for nothing.  Returns
 * 0, or ERR_DB (the caller rolls the transaction back).
 */
#define SEARCH_INDEX_JOIN_EVENTS 256
int search_index_join_commit(struct search_index *x, size_t events, int64_t upto);
/* After each commit: the highest seq it stored (0 if none). */
void search_index_committed(struct search_index *x, int64_t last_seq);
/* After a transaction was rolled back: forgets what it had joined. */
void search_index_rolled_back(struct search_index *x);
/* Milliseconds until the next batch is due: 0 now, -1 when nothing waits. */
int search_index_due_in_ms(struct search_index *x);
/* Indexes one batch (at most search_index_batch seqs) in a transaction of
 * its own and publishes the new position.  Returns 0 or ERR_DB (nothing
 * changed; it is tried again after delay_ms). */
int search_index_run(struct search_index *x);
/* Runs batches until everything committed is indexed (operator jobs that
 * match by search, the end of the writer).  Returns 0 or ERR_DB. */
int search_index_catch_up(struct search_index *x);

#endif
