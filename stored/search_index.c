/* search_index.c - the full-text index in search.db (see search_index.h). */
#include "search_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../common/prio.h"
#include "db.h"
#include "sql.h"

/* ---- the writer's side ---- */

void search_index_path(char *out, size_t size, const char *db_path)
{
	const char *slash = strrchr(db_path, '/');
	int dir_len = slash ? (int)(slash - db_path) + 1 : 0;

	snprintf(out, size, "%.*ssearch.db", dir_len, db_path);
}

/* search_note_gone(seq) in the trigger: returns seq, and tells the
 * watermark a deletion is to be committed, so the indexer sleeps until one
 * is rather than polling the log. */
static void search_note_gone(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	search_watermark_gone_logged(sqlite3_user_data(ctx));
	sqlite3_result_value(ctx, argv[0]);
}

int search_index_track_deletions(sqlite3 *db, struct search_watermark *wm)
{
	if (sqlite3_create_function(db, "search_note_gone", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY,
				    wm, search_note_gone, NULL, NULL) != SQLITE_OK) {
		log_warnx("search index: %s", sqlite3_errmsg(db));
		return ERR_DB;
	}
	return sql_exec(db, "CREATE TEMP TRIGGER IF NOT EXISTS search_log_gone"
			   " AFTER DELETE ON main.events BEGIN"
			   " INSERT INTO search_gone(seq) VALUES(search_note_gone(old.seq));"
			   " END");
}

int search_index_prune_gone(sqlite3 *db, struct search_watermark *wm, int64_t *pruned)
{
	sqlite3_stmt *st;
	int64_t done;
	int rc;

	pthread_mutex_lock(&wm->lock);
	done = wm->gone_done;
	pthread_mutex_unlock(&wm->lock);
	if (done <= *pruned)
		return 0;
	if (sqlite3_prepare_v2(db, "DELETE FROM search_gone WHERE id <= ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return ERR_DB;
	sqlite3_bind_int64(st, 1, done);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_warnx("search index: pruning search_gone: %s", sqlite3_errmsg(db));
		return ERR_DB;
	}
	*pruned = done;
	return 0;
}

/* Removes a database file and its WAL and shared-memory files. */
static int search_unlink(const char *path)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char name[4096];
	int rc = 0;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
		snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
		if (unlink(name) && errno != ENOENT) {
			log_warnx("search index: cannot remove %s: %s", name, strerror(errno));
			rc = ERR_IO;
		}
	}
	return rc;
}

int search_index_remove(sqlite3 *db, const char *index_path)
{
	if (access(index_path, F_OK) == 0)
		log_info("search = 0: removing the search index %s", index_path);
	if (search_unlink(index_path))
		return ERR_DB;
	return sql_exec(db, "DELETE FROM search_gone");
}

/* ---- the indexer ---- */

static const char search_schema[] =
	"CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(content, tokenize='unicode61');"
	/* How far the index reaches, and whose events it holds: the token
	 * of the relay.db it was built from (db_identity). */
	"CREATE TABLE IF NOT EXISTS search_state("
	" one INTEGER PRIMARY KEY CHECK (one = 1),"
	" owner BLOB,"
	" indexed INTEGER NOT NULL,"
	" gone_done INTEGER NOT NULL);"
	"INSERT OR IGNORE INTO search_state VALUES(1, NULL, 0, 0);";

/* The decoded content of every stored event in a range of seqs; an event
 * deleted before its turn is simply not there any more.  SQLite's
 * json_extract() ends a string at \u0000, so a JSON holding one has it
 * written as \u0020 first: a space, which splits words as U+0000 does for
 * live matching (search.h).  Each escaped backslash is spelled \u005c
 * beforehand, so the text \u0000 after one is left as it is. */
static const char search_insert_sql[] =
	"INSERT INTO events_fts(rowid, content)"
	" SELECT seq, text FROM (SELECT seq, json_extract(CASE WHEN instr(json, '\\u0000')"
	"   THEN replace(replace(json, '\\\\', '\\u005c'), '\\u0000', '\\u0020')"
	"   ELSE json END, '$.content') AS text"
	"  FROM events_db.events WHERE seq > ?1 AND seq <= ?2)"
	" WHERE text IS NOT NULL AND text <> ''";

static const char search_forget_sql[] =
	"DELETE FROM events_fts WHERE rowid IN"
	" (SELECT seq FROM events_db.search_gone WHERE id > ?1 AND id <= ?2)";

struct search_index {
	sqlite3 *db; /* search.db as main, relay.db as events_db (read-only) */
	sqlite3_stmt *insert;
	sqlite3_stmt *forget;
	sqlite3_stmt *last_gone;
	sqlite3_stmt *save;
	struct search_watermark *wm;
	uint32_t batch;
	uint32_t delay_ms;
	int64_t indexed; /* the indexer's own copies of wm's fields */
	int64_t gone_done;
	int64_t retry_at_ms;     /* after a failure, not before this */
	int64_t backlog_since_ms; /* opened with more than a batch to index (0: no) */
	pthread_t thread;
	int nice;
	bool running;
};

static int search_prepare(struct search_index *x, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v3(x->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK) {
		log_warnx("search index: %s", sqlite3_errmsg(x->db));
		return ERR_DB;
	}
	return 0;
}

/* True if search.db holds another relay.db's index, or one ahead of this
 * relay.db (an older copy restored): it is then rebuilt. */
static bool search_is_stale(sqlite3 *db)
{
	int64_t mismatched = 1;

	if (sql_read_int(db,
			"SELECT s.owner IS NOT NULL AND (s.owner IS NOT (SELECT token FROM"
			" events_db.db_identity LIMIT 1) OR s.indexed > (SELECT coalesce(max(seq), 0)"
			" FROM events_db.events)) FROM search_state s",
			&mismatched))
		return true;
	return mismatched != 0;
}

/* search.db with its schema, relay.db attached.  The index is derived
 * data: one that is stale or cannot be opened (a damaged file) is removed
 * and built again, once. */
static sqlite3 *search_open_file(const char *db_path, const char *index_path)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		sqlite3 *db = NULL;
		const char *why = "cannot be opened";

		if (!db_open_index(index_path, &db) && !sql_exec(db, search_schema) &&
		    !db_attach(db, db_path, "events_db")) {
			if (!search_is_stale(db))
				return db;
			why = "belongs to another database or is ahead of it";
		}
		db_close(db);
		if (attempt > 0)
			break;
		log_warnx("search index %s %s: rebuilding it", index_path, why);
		if (search_unlink(index_path))
			break;
	}
	return NULL;
}

static void search_publish(struct search_index *x)
{
	pthread_mutex_lock(&x->wm->lock);
	x->wm->indexed = x->indexed;
	x->wm->gone_done = x->gone_done;
	if (x->wm->committed < x->indexed)
		x->wm->committed = x->indexed;
	x->wm->ready = true;
	x->wm->wake_lag = x->delay_ms ? x->batch : 1;
	pthread_cond_broadcast(&x->wm->advanced);
	pthread_mutex_unlock(&x->wm->lock);
}

struct search_index *search_index_open(const char *db_path, const char *index_path,
				       struct search_watermark *wm, uint32_t batch,
				       uint32_t delay_ms)
{
	struct search_index *x = calloc(1, sizeof(*x));
	int64_t committed = 0;

	if (!x)
		return NULL;
	*x = (struct search_index){ .wm = wm, .batch = batch ? batch : 1, .delay_ms = delay_ms };
	if (!(x->db = search_open_file(db_path, index_path)) ||
	    sql_exec(x->db, "UPDATE search_state SET owner ="
			   " (SELECT token FROM events_db.db_identity LIMIT 1)") ||
	    sql_read_int(x->db, "SELECT indexed FROM search_state", &x->indexed) ||
	    sql_read_int(x->db, "SELECT gone_done FROM search_state", &x->gone_done) ||
	    sql_read_int(x->db, "SELECT coalesce(max(seq), 0) FROM events_db.events", &committed) ||
	    search_prepare(x, search_insert_sql, &x->insert) ||
	    search_prepare(x, search_forget_sql, &x->forget) ||
	    search_prepare(x, "SELECT coalesce(max(id), 0) FROM events_db.search_gone",
			   &x->last_gone) ||
	    search_prepare(x, "UPDATE search_state SET indexed = ?1, gone_done = ?2", &x->save)) {
		search_index_close(x);
		return NULL;
	}
	if (committed > x->indexed)
		log_info("search index: up to %lld events to index", (long long)(committed - x->indexed));
	if (committed - x->indexed > (int64_t)x->batch)
		x->backlog_since_ms = deadline_now_ms();
	search_watermark_committed(wm, committed);
	search_publish(x);
	/* The first run reads the deletions logged before this start. */
	pthread_mutex_lock(&wm->lock);
	wm->gone_pending = true;
	pthread_mutex_unlock(&wm->lock);
	return x;
}

void search_index_close(struct search_index *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->wm->lock);
	x->wm->stop = true;
	pthread_cond_signal(&x->wm->work);
	pthread_mutex_unlock(&x->wm->lock);
	if (x->running)
		pthread_join(x->thread, NULL);
	/* Searchers stop waiting for an indexer that is gone. */
	pthread_mutex_lock(&x->wm->lock);
	x->wm->ready = false;
	x->wm->stop = false;
	pthread_cond_broadcast(&x->wm->advanced);
	pthread_mutex_unlock(&x->wm->lock);
	sqlite3_finalize(x->insert);
	sqlite3_finalize(x->forget);
	sqlite3_finalize(x->last_gone);
	sqlite3_finalize(x->save);
	db_close(x->db);
	free(x);
}

/* Under wm->lock: true when new text is due (a search waits, a batch is
 * full, or delay_ms has passed); otherwise a run only forgets gone text. */
static bool search_text_due_locked(struct search_index *x, int64_t now)
{
	struct search_watermark *wm = x->wm;

	return wm->committed > x->indexed &&
	       (wm->wanted > x->indexed || wm->committed - x->indexed >= (int64_t)x->batch ||
		wm->pending_since_ms + x->delay_ms <= now);
}

/* Under wm->lock: milliseconds until the next run, or -1 if none is due
 * until the writer commits again. */
static int search_due_locked(struct search_index *x, int64_t now)
{
	struct search_watermark *wm = x->wm;
	int64_t due;

	if (wm->gone_pending || search_text_due_locked(x, now))
		due = now;
	else if (wm->committed > x->indexed)
		due = wm->pending_since_ms + x->delay_ms;
	else
		return -1;
	if (x->retry_at_ms > due)
		due = x->retry_at_ms;
	return due > now ? (int)(due - now) : 0;
}

int search_index_due_in_ms(struct search_index *x)
{
	int due;

	pthread_mutex_lock(&x->wm->lock);
	due = search_due_locked(x, deadline_now_ms());
	pthread_mutex_unlock(&x->wm->lock);
	return due;
}

static int search_step(struct search_index *x, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warnx("search index: %s", sqlite3_errmsg(x->db));
		return ERR_DB;
	}
	return 0;
}

/* Inside the run's transaction: indexes (indexed, upto] and forgets the
 * gone ids in (gone_done, gone_upto]. */
static int search_apply(struct search_index *x, int64_t upto, int64_t gone_upto)
{
	if (upto > x->indexed) {
		sqlite3_bind_int64(x->insert, 1, x->indexed);
		sqlite3_bind_int64(x->insert, 2, upto);
		if (search_step(x, x->insert))
			return ERR_DB;
	}
	if (gone_upto > x->gone_done) {
		sqlite3_bind_int64(x->forget, 1, x->gone_done);
		sqlite3_bind_int64(x->forget, 2, gone_upto);
		if (search_step(x, x->forget))
			return ERR_DB;
	}
	sqlite3_bind_int64(x->save, 1, upto);
	sqlite3_bind_int64(x->save, 2, gone_upto);
	return search_step(x, x->save);
}

int search_index_run(struct search_index *x)
{
	int64_t upto, committed, gone_upto = 0;
	bool gone_pending;

	pthread_mutex_lock(&x->wm->lock);
	/* Cleared before the read: a deletion committed after it wakes the
	 * indexer again. */
	gone_pending = x->wm->gone_pending;
	x->wm->gone_pending = false;
	upto = x->indexed;
	committed = x->wm->committed;
	if (search_text_due_locked(x, deadline_now_ms()))
		upto = x->wm->committed - x->indexed > (int64_t)x->batch ? x->indexed + x->batch
									  : x->wm->committed;
	pthread_mutex_unlock(&x->wm->lock);
	/* One read snapshot of relay.db from the first read to COMMIT: an
	 * event deleted in it is neither indexed nor left behind. */
	if (sql_exec(x->db, "BEGIN IMMEDIATE"))
		goto failed;
	if (sqlite3_step(x->last_gone) == SQLITE_ROW)
		gone_upto = sqlite3_column_int64(x->last_gone, 0);
	sqlite3_reset(x->last_gone);
	if (gone_upto < x->gone_done)
		gone_upto = x->gone_done;
	if (upto == x->indexed && gone_upto == x->gone_done) {
		sql_exec(x->db, "ROLLBACK"); /* nothing to write */
		return 0;
	}
	if (search_apply(x, upto, gone_upto) || sql_exec(x->db, "COMMIT")) {
		sql_exec(x->db, "ROLLBACK");
		goto failed;
	}
	x->indexed = upto;
	x->gone_done = gone_upto;
	x->retry_at_ms = 0;
	if (x->backlog_since_ms && upto >= committed) {
		log_info("search index: caught up in %.1f s",
			 (double)(deadline_now_ms() - x->backlog_since_ms) / 1000);
		x->backlog_since_ms = 0;
	}
	pthread_mutex_lock(&x->wm->lock);
	if (x->wm->committed > x->indexed)
		x->wm->pending_since_ms = deadline_now_ms();
	pthread_mutex_unlock(&x->wm->lock);
	search_publish(x);
	return 0;
failed:
	x->retry_at_ms = deadline_now_ms() + (x->delay_ms ? x->delay_ms : 1000);
	if (gone_pending) {
		pthread_mutex_lock(&x->wm->lock);
		x->wm->gone_pending = true;
		pthread_mutex_unlock(&x->wm->lock);
	}
	return ERR_DB;
}

static void *search_main(void *arg)
{
	struct search_index *x = arg;
	struct timespec until;
	int due;

	pthread_setname_np(pthread_self(), "indexer"); /* for top -H, perf */
	prio_set_this_thread(x->nice);
	pthread_mutex_lock(&x->wm->lock);
	while (!x->wm->stop) {
		due = search_due_locked(x, deadline_now_ms());
		if (due < 0) {
			pthread_cond_wait(&x->wm->work, &x->wm->lock);
			continue;
		}
		if (due > 0) {
			deadline_after_ms(&until, CLOCK_MONOTONIC, due);
			pthread_cond_timedwait(&x->wm->work, &x->wm->lock, &until);
			continue;
		}
		pthread_mutex_unlock(&x->wm->lock);
		search_index_run(x);
		pthread_mutex_lock(&x->wm->lock);
	}
	pthread_mutex_unlock(&x->wm->lock);
	return NULL;
}

int search_index_start(struct search_index *x, int nice)
{
	x->nice = nice;
	if (pthread_create(&x->thread, NULL, search_main, x))
		return ERR_NOMEM;
	x->running = true;
	return 0;
}
