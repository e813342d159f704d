/*
 * search_watermark.h - how far NIP-50's full-text index reaches, shared by
 * the writer (what is committed), the indexer (what is indexed, and how far
 * it applied deletions) and searchers (what they wait for).
 *
 * One mutex guards it all; two condition variables (on CLOCK_MONOTONIC)
 * carry the wake-ups: searchers wait on advanced, the indexer on work.
 * The index itself is search_index.h's.
 */
#ifndef STORED_SEARCH_WATERMARK_H
#define STORED_SEARCH_WATERMARK_H

#include <pthread.h>
#include <stdbool.h>
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
	bool gone_logged;        /* the writer's open transaction logged a deletion */
	bool gone_pending;       /* a committed deletion the indexer has not read */
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
/* A search's wait, both halves: true once the index covers every event up
 * to seq (0: whatever is committed now).  After timeout_ms it logs and
 * returns false; the search then runs on what is indexed. */
bool search_watermark_await(struct search_watermark *wm, int64_t seq, int timeout_ms);
/* Events committed whose text the index does not have yet (0 with
 * search = 0), for /metrics and the admin socket. */
int64_t search_watermark_lag(struct search_watermark *wm);
/* The writer's half, after each commit: the highest seq it stored (0 if
 * none).  Wakes the indexer when its batch is full (or delay_ms is 0), or
 * when the commit deleted events (search_watermark_gone_logged). */
void search_watermark_committed(struct search_watermark *wm, int64_t last_seq);
/* The writer's trigger, inside its transaction: an event was deleted.  The
 * indexer is woken at the next commit, not before: until then it could not
 * see the log's new row.  A rollback costs the indexer one idle run. */
void search_watermark_gone_logged(struct search_watermark *wm);

#endif
