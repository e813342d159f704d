/* search_index.c - the full-text index, written in batches (see search_index.h). */
#include "search_index.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"

/* ---- the watermark searchers wait on ---- */

int search_watermark_init(struct search_watermark *wm)
{
	int rc;

	*wm = (struct search_watermark){ 0 };
	if ((rc = pthread_mutex_init(&wm->lock, NULL)))
		return rc;
	if ((rc = deadline_cond_init(&wm->advanced)))
		pthread_mutex_destroy(&wm->lock);
	return rc;
}

void search_watermark_destroy(struct search_watermark *wm)
{
	pthread_cond_destroy(&wm->advanced);
	pthread_mutex_destroy(&wm->lock);
}

bool search_watermark_want(struct search_watermark *wm, int64_t *seq)
{
	bool covered;

	pthread_mutex_lock(&wm->lock);
	if (*seq <= 0)
		*seq = wm->committed;
	covered = !wm->ready || wm->indexed >= *seq;
	if (!covered && wm->wanted < *seq)
		wm->wanted = *seq;
	pthread_mutex_unlock(&wm->lock);
	return covered;
}

int64_t search_watermark_lag(struct search_watermark *wm)
{
	int64_t lag;

	pthread_mutex_lock(&wm->lock);
	lag = wm->ready && wm->committed > wm->indexed ? wm->committed - wm->indexed : 0;
	pthread_mutex_unlock(&wm->lock);
	return lag;
}

bool search_watermark_wait(struct search_watermark *wm, int64_t seq, int timeout_ms)
{
	struct timespec until;
	bool covered;

	deadline_after_ms(&until, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&wm->lock);
	while (wm->ready && wm->indexed < seq &&
	       pthread_cond_timedwait(&wm->advanced, &wm->lock, &until) != ETIMEDOUT)
		;
	covered = !wm->ready || wm->indexed >= seq;
	pthread_mutex_unlock(&wm->lock);
	return covered;
}

/* ---- the writer's half ---- */

/* The decoded content of every stored event in a range of seqs; an event
 * deleted before its turn is simply not there any more. */
static const char search_index_sql[] =
	"INSERT INTO events_fts(rowid, content)"
	" SELECT seq, text FROM (SELECT seq, json_extract(json, '$.content') AS text FROM events"
	"  WHERE seq > ?1 AND seq <= ?2)"
	" WHERE text IS NOT NULL AND text <> ''";

struct search_index {
	sqlite3 *db;
	sqlite3_stmt *insert;
	struct search_watermark *wm;
	uint32_t batch;
	uint32_t delay_ms;
	int64_t committed; /* the writer's own copies of wm's fields */
	int64_t indexed;
	int64_t pending_since_ms; /* when the first unindexed event was committed */
	int64_t retry_at_ms;      /* after a failure, not before this */
	int64_t joined_upto;      /* indexed by the open transaction, once it commits */
};

static int64_t search_index_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int search_index_read_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ERR_DB;
	rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ERR_DB;
}

static void search_index_publish(struct search_index *x)
{
	pthread_mutex_lock(&x->wm->lock);
	x->wm->committed = x->committed;
	x->wm->indexed = x->indexed;
	x->wm->ready = true;
	pthread_cond_broadcast(&x->wm->advanced);
	pthread_mutex_unlock(&x->wm->lock);
}

struct search_index *search_index_new(sqlite3 *db, struct search_watermark *wm, uint32_t batch,
				      uint32_t delay_ms)
{
	struct search_index *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	*x = (struct search_index){ .db = db, .wm = wm, .batch = batch ? batch : 1,
				    .delay_ms = delay_ms };
	/* Text rows only leave with their events, so every event past the
	 * highest indexed rowid is one the index has not seen. */
	if (sqlite3_prepare_v3(db, search_index_sql, -1, SQLITE_PREPARE_PERSISTENT, &x->insert,
			       NULL) != SQLITE_OK ||
	    search_index_read_int(db, "SELECT rowid FROM events_fts ORDER BY rowid DESC LIMIT 1",
				  &x->indexed) ||
	    search_index_read_int(db, "SELECT max(seq) FROM events", &x->committed)) {
		log_warnx("search index: %s", sqlite3_errmsg(db));
		search_index_free(x);
		return NULL;
	}
	if (x->committed < x->indexed)
		x->committed = x->indexed;
	x->pending_since_ms = search_index_now_ms();
	if (x->committed > x->indexed)
		log_info("search index: %lld events to index", (long long)(x->committed - x->indexed));
	/* Indexing inside each commit must start from a complete index, or
	 * the backlog and the new commits would overlap. */
	if (delay_ms == 0 && search_index_catch_up(x)) {
		search_index_free(x);
		return NULL;
	}
	search_index_publish(x);
	return x;
}

void search_index_free(struct search_index *x)
{
	if (!x)
		return;
	/* Searchers stop waiting for a writer that is gone. */
	pthread_mutex_lock(&x->wm->lock);
	x->wm->ready = false;
	pthread_cond_broadcast(&x->wm->advanced);
	pthread_mutex_unlock(&x->wm->lock);
	sqlite3_finalize(x->insert);
	free(x);
}

static bool search_index_wanted(struct search_index *x)
{
	bool wanted;

	pthread_mutex_lock(&x->wm->lock);
	wanted = x->wm->wanted > x->indexed;
	pthread_mutex_unlock(&x->wm->lock);
	return wanted;
}

static int search_index_insert(struct search_index *x, int64_t upto)
{
	int rc;

	sqlite3_bind_int64(x->insert, 1, x->indexed);
	sqlite3_bind_int64(x->insert, 2, upto);
	rc = sqlite3_step(x->insert);
	sqlite3_reset(x->insert);
	if (rc != SQLITE_DONE) {
		log_warnx("search index: %s", sqlite3_errmsg(x->db));
		return ERR_DB;
	}
	return 0;
}

int search_index_join_commit(struct search_index *x, size_t events, int64_t upto)
{
	/* delay 0: ingest.c indexes each event itself. */
	if (!x || !x->delay_ms || upto <= x->indexed ||
	    (events < SEARCH_INDEX_JOIN_EVENTS && !search_index_wanted(x)))
		return 0;
	if (search_index_insert(x, upto))
		return ERR_DB;
	x->joined_upto = upto;
	return 0;
}

void search_index_rolled_back(struct search_index *x)
{
	if (x)
		x->joined_upto = 0;
}

void search_index_committed(struct search_index *x, int64_t last_seq)
{
	if (!x)
		return;
	if (x->joined_upto > x->indexed) { /* the commit carried its own text */
		x->indexed = x->joined_upto;
		x->pending_since_ms = search_index_now_ms();
	}
	x->joined_upto = 0;
	if (last_seq > x->committed) {
		if (x->delay_ms == 0)
			x->indexed = last_seq; /* ingest.c indexed each event */
		else if (x->committed == x->indexed && last_seq > x->indexed)
			x->pending_since_ms = search_index_now_ms();
		x->committed = last_seq;
	}
	search_index_publish(x);
}

int search_index_due_in_ms(struct search_index *x)
{
	int64_t now, due;
	bool wanted;

	if (!x || x->committed <= x->indexed)
		return -1;
	now = search_index_now_ms();
	if (x->retry_at_ms > now)
		return (int)(x->retry_at_ms - now);
	wanted = search_index_wanted(x);
	if (wanted || x->committed - x->indexed >= (int64_t)x->batch)
		return 0;
	due = x->pending_since_ms + x->delay_ms - now;
	return due > 0 ? (int)due : 0;
}

static int search_index_exec(struct search_index *x, const char *sql)
{
	if (sqlite3_exec(x->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("search index: %s: %s", sql, sqlite3_errmsg(x->db));
		return ERR_DB;
	}
	return 0;
}

int search_index_run(struct search_index *x)
{
	int64_t upto;

	if (!x || x->committed <= x->indexed)
		return 0;
	upto = x->committed - x->indexed > (int64_t)x->batch ? x->indexed + x->batch : x->committed;
	if (search_index_exec(x, "BEGIN IMMEDIATE"))
		goto failed;
	if (search_index_insert(x, upto)) {
		search_index_exec(x, "ROLLBACK");
		goto failed;
	}
	if (search_index_exec(x, "COMMIT")) {
		search_index_exec(x, "ROLLBACK");
		goto failed;
	}
	x->indexed = upto;
	x->pending_since_ms = search_index_now_ms();
	x->retry_at_ms = 0;
	search_index_publish(x);
	return 0;
failed:
	x->retry_at_ms = search_index_now_ms() + (x->delay_ms ? x->delay_ms : 1000);
	return ERR_DB;
}

int search_index_catch_up(struct search_index *x)
{
	while (x && x->committed > x->indexed)
		if (search_index_run(x))
			return ERR_DB;
	return 0;
}
