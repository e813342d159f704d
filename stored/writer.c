/* writer.c - group-commit writer thread (see writer.h). */
#include "writer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../common/retention.h"
#include "../proto/msg.h"
#include "backup.h"
#include "checkpoint.h"
#include "db.h"
#include "diskwatch.h"
#include "sql.h"
#include "ingest.h"
#include "jobs.h"
#include "maint.h"
#include "../common/prio.h"
#include "query.h"
#include "queue.h"
#include "stored.h"
#include "reply.h"
#include "search_index.h"
#include "walbuf.h"

struct writer {
	struct stored *s;
	sqlite3 *db;
	struct ingest *ingest;
	struct search_index *search; /* NULL with search = 0 */
	int64_t gone_pruned; /* search_gone is pruned up to this id */
	struct write_job **batch;
	enum ingest_outcome *outcome;
	int64_t *seq;
	struct bcast_job **forward; /* the committed batch's jobs for the broadcaster */
	const char **why; /* INGEST_REFUSED: the message */
	struct msg_event_results_item *results; /* the batch's replies */
	struct rpc_return *result_to;            /* where each goes */
	size_t nresults;
	struct msg_event_results_item *group;   /* one message's results */
	bool *sent;                              /* results already sent */
	struct write_job *op; /* an operator's job met while collecting a batch */
	int64_t last_expiry;
	struct checkpointer *checkpointer; /* NULL: SQLite's automatic checkpoint */
	int wal_pages; /* the WAL's size after the last commit */
	size_t unpublished; /* events of the committing batch the broadcaster has not had */
};

/* SQLite calls this after each commit; installing it also turns off the
 * automatic checkpoint (checkpoint.h says why). */
static int writer_wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct writer *w = arg;

	w->wal_pages = pages;
	return SQLITE_OK;
}

/* After a batch is answered: let the checkpoint thread copy the WAL, or
 * copy it here when the WAL is past its bound. */
static void writer_checkpoint(struct writer *w)
{
	if (!w->checkpointer || !checkpointer_after_commit(w->checkpointer, w->wal_pages))
		return;
	/* It could not copy past the backup's snapshot, and would copy the
	 * whole backlog here on the live path the moment the copy ends: the
	 * backup's thread does that instead (backup.h). */
	if (backup_holds_wal(w->s->backup))
		return;
	/* main: this connection's own file (search.db is its indexer's). */
	if (sqlite3_wal_checkpoint_v2(w->db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) == SQLITE_OK)
		w->wal_pages = 0;
}

static const char *writer_message(enum ingest_outcome outcome, const char *why)
{
	switch (outcome) {
	case INGEST_REFUSED: return why;
	case INGEST_STORED: return "";
	case INGEST_DUPLICATE: return "duplicate: already have this event";
	case INGEST_SUPERSEDED: return "duplicate: a newer version of this event is stored";
	default: return "error: could not store the event";
	}
}

/* Records the outcome for the batch's replies (sent by writer_send_results),
 * or, for an import, where the operator reads it. */
static void writer_note_result(struct writer *w, size_t i, const uint8_t *id,
			       enum ingest_outcome outcome, const char *why)
{
	const struct write_job *job = w->batch[i];
	const char *text = writer_message(outcome, why);
	struct msg_event_results_item *item = &w->results[w->nresults];

	if (job->admin) { /* an import: the operator reads the outcome */
		job->admin->results[job->admin_index] =
		    (struct admin_result){ .outcome = (int)outcome, .message = text };
		return;
	}
	item->request_id = job->to.request_id;
	item->result = (struct msg_event_result){
		.conn_id = job->conn_id,
		.accepted = outcome != INGEST_FAILED && outcome != INGEST_REFUSED,
		.message = { text, (uint32_t)strlen(text) },
	};
	memcpy(item->result.id, id, EVENT_ID_LEN);
	w->result_to[w->nresults++] = job->to;
}

static bool writer_same_route(const struct rpc_return *a, const struct rpc_return *b)
{
	return a->worker == b->worker && a->pipe == b->pipe;
}

/* Results per EVENT_RESULTS message: about 80 KiB at most, far below what
 * a worker accepts in one message even with commit_batch at its maximum. */
#define WRITER_RESULTS_PER_MESSAGE 512

static void writer_send_group(struct writer *w, const struct rpc_return *to, size_t count)
{
	struct buf out = BUF_INIT;
	struct msg_header h = msg_header_for(to->worker, 0);
	struct msg_event_results m = { (uint32_t)count, w->group };

	if (msg_encode_event_results(&out, &h, &m) == 0)
		reply_send(w->s, to, out.data, out.len);
	buf_free(&out);
}

/*
 * Sends the batch's results as EVENT_RESULTS messages, one per worker (or a
 * few for a very large batch), each in commit order: one message instead of
 * hundreds per commit.
 */
static void writer_send_results(struct writer *w)
{
	memset(w->sent, 0, w->nresults * sizeof(*w->sent));
	for (size_t first = 0; first < w->nresults; first++) {
		struct rpc_return to = w->result_to[first];
		size_t count = 0;

		if (w->sent[first])
			continue;
		for (size_t i = first; i < w->nresults; i++) {
			if (w->sent[i] || !writer_same_route(&w->result_to[i], &to))
				continue;
			w->sent[i] = true;
			w->group[count++] = w->results[i];
			if (count == WRITER_RESULTS_PER_MESSAGE) {
				writer_send_group(w, &to, count);
				count = 0;
			}
		}
		if (count)
			writer_send_group(w, &to, count);
	}
	w->nresults = 0;
}

void writer_count_reject(struct stored_stats *st, const char *message)
{
	static const char *const prefixes[] = {
		[STORED_REJECT_DUPLICATE] = "duplicate:",
		[STORED_REJECT_BLOCKED] = "blocked:",
		[STORED_REJECT_ERROR] = "error:",
	};
	int reason = STORED_REJECT_OTHER;

	if (!message[0])
		return;
	for (int i = 0; i < STORED_REJECT_OTHER; i++)
		if (strncmp(message, prefixes[i], strlen(prefixes[i])) == 0)
			reason = i;
	atomic_fetch_add(&st->rejects[reason], 1);
}

/* Makes the broadcaster's job for a committed event; the job's event
 * moves.  NULL without memory (the event is then not delivered live). */
static struct bcast_job *writer_forward_job(struct write_job *job, int64_t seq)
{
	struct bcast_job *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->kind = BCAST_EVENT;
	b->seq = seq;
	b->event = job->event;
	memset(&job->event, 0, sizeof(job->event));
	memcpy(job->event.id, b->event.id, EVENT_ID_LEN); /* for its author's OK */
	return b;
}

/* Removes what has expired (NIP-40), a bounded slice per transaction so a
 * large backlog never holds the write lock for long.  Queries already hide
 * expired events; this only frees the disk. */
static void writer_expire(struct writer *w)
{
	static const char sql[] = "DELETE FROM events WHERE seq IN (SELECT seq FROM events"
				  " WHERE expires_at <= ?1 LIMIT 5000)";
	sqlite3_stmt *st;
	int changed;

	if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	do {
		sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
		changed = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(w->db) : 0;
		sqlite3_reset(st);
		if (changed)
			log_debug("removed %d expired events", changed);
	} while (changed == 5000 && !atomic_load(&w->s->stopping));
	sqlite3_finalize(st);
}

/* The operator's retention rules (retention.h), a bounded slice per
 * statement like the expiry job. */
static void writer_retention(struct writer *w)
{
	struct retention rules;
	char err[160];
	int64_t now = (int64_t)time(NULL);

	if (retention_parse(w->s->cfg.retention, &rules, err, sizeof(err)))
		return; /* config_load() refused it already */
	for (uint32_t i = 0; i < rules.nrules && !atomic_load(&w->s->stopping); i++) {
		struct buf sql = BUF_INIT;
		sqlite3_stmt *st;
		int changed;

		if (buf_append_str(&sql, "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE ") ||
		    retention_where(&rules, i, now, &sql) || buf_append_str(&sql, " LIMIT 5000)") ||
		    sqlite3_prepare_v2(w->db, sql.data, -1, &st, NULL) != SQLITE_OK) {
			buf_free(&sql);
			continue;
		}
		do {
			changed = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(w->db) : 0;
			sqlite3_reset(st);
			if (changed)
				log_info("retention rule %u removed %d events", i + 1, changed);
		} while (changed == 5000 && !atomic_load(&w->s->stopping));
		sqlite3_finalize(st);
		buf_free(&sql);
	}
}

/* After commits of no new events (expiry, retention, an operator's job):
 * the indexer takes out the text of what they deleted. */
static void writer_committed_deletions(struct writer *w)
{
	if (w->search)
		search_watermark_committed(&w->s->search, 0);
}

/* How long the writer waits for work before the checkpoint thread may copy
 * what it has not been woken for (checkpoint.h, checkpointer_idle). */
#define WRITER_IDLE_MS 200

/* The first wait of an idle spell is cut to WRITER_IDLE_MS while the WAL
 * holds pages the checkpoint thread was not woken for; once it is woken,
 * the writer waits its full time again. */
static bool writer_idle_due(const struct writer *w, int timeout)
{
	return w->checkpointer && timeout > WRITER_IDLE_MS &&
	       checkpointer_idle_due(w->checkpointer, w->wal_pages);
}

/* Waits for the first job of a batch, running the expiry job when due. */
static struct write_job *writer_wait(struct writer *w)
{
	int64_t interval = (int64_t)w->s->cfg.expire_interval;
	struct write_job *job;
	int timeout;

	for (;;) {
		/* An interval, so on the monotonic clock: a wall clock stepped
		 * back by NTP must not put the expiry job off by as much. */
		int64_t now = deadline_now_ms() / 1000;

		if (now - w->last_expiry >= interval) {
			writer_expire(w);
			writer_retention(w);
			writer_committed_deletions(w);
			w->last_expiry = now;
		}
		timeout = (int)(interval * 1000);
		if (writer_idle_due(w, timeout)) {
			job = queue_pop_timed(w->s->write_q, WRITER_IDLE_MS);
			if (!job) {
				checkpointer_idle(w->checkpointer, w->wal_pages);
				continue;
			}
		} else {
			job = queue_pop_timed(w->s->write_q, timeout);
		}
		if (job || queue_closed(w->s->write_q))
			return job;
	}
}

/* An operator's job that is not an event to import. */
static bool writer_is_op(const struct write_job *job)
{
	return job->admin && job->admin->op != ADMIN_OP_IMPORT;
}

/* Collects a batch of events; an operator's job ends the batch and waits
 * in w->op, so it runs after the events queued before it. */
static size_t writer_collect(struct writer *w)
{
	size_t n = 0;
	struct write_job *job = writer_wait(w);

	while (job) {
		if (writer_is_op(job)) {
			w->op = job;
			break;
		}
		w->batch[n++] = job;
		if (n == w->s->cfg.commit_batch)
			break;
		job = queue_pop_nowait(w->s->write_q);
	}
	return n;
}

static int writer_exec(struct writer *w, const char *sql)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("sqlite %s: %s", sql, sqlite3_errmsg(w->db));
		return ERR_DB;
	}
	return 0;
}

/* Hands the batch's stored events to the broadcaster, in commit order,
 * once: from the WAL's sync (writer_commit_written) or after the commit.
 * All in one push: the broadcaster runs at a higher priority than the
 * writer, and one push per event let it preempt the writer to take each
 * event alone, two context switches per event (bench/RESULTS.md, item 40). */
static void writer_publish(struct writer *w)
{
	size_t n = 0, pushed;

	for (size_t i = 0; i < w->unpublished; i++) {
		struct bcast_job *b;

		if (w->outcome[i] != INGEST_STORED)
			continue;
		b = writer_forward_job(w->batch[i], w->seq[i]);
		if (b)
			w->forward[n++] = b;
	}
	w->unpublished = 0;
	pushed = queue_push_many(w->s->bcast_q, (void *const *)w->forward, n);
	if (pushed < n)
		log_warnx("broadcast queue full: %zu live deliveries dropped", n - pushed);
	for (size_t i = pushed; i < n; i++)
		bcast_job_free(w->forward[i]);
}

/*
 * The walbuf hook: the commit's frames are in the WAL file and only its
 * sync is to come, so live deliveries go out while the disk syncs.  A crash
 * of stored from here on keeps the commit; the author's OK still waits for
 * the sync.  Other commits (expiry, the search index, operators' jobs)
 * have nothing to publish.
 */
static void writer_commit_written(void *arg)
{
	writer_publish(arg);
}

/* Refuses a batch without a transaction when the disk is below its
 * reserve: events the rpc thread queued just before, and imports. */
static bool writer_refuse_full(struct writer *w, size_t n)
{
	if (!diskwatch_full(&w->s->disk))
		return false;
	for (size_t i = 0; i < n; i++) {
		w->outcome[i] = INGEST_REFUSED;
		w->why[i] = DISKWATCH_MESSAGE;
	}
	diskwatch_count_refused(&w->s->disk, n);
	return true;
}

/* Applies a batch; returns 0 if it committed, or refused it whole for
 * want of space. */
static int writer_apply(struct writer *w, size_t n)
{
	int64_t last = 0;

	if (writer_refuse_full(w, n))
		return 0;
	if (writer_exec(w, "BEGIN IMMEDIATE"))
		return ERR_DB;
	for (size_t i = 0; i < n; i++) {
		w->outcome[i] = ingest_event(w->ingest, &w->batch[i]->event, &w->seq[i], &w->why[i]);
		/* A failed statement may leave an event half-written (row without
		 * its tags): the whole batch goes back and is answered error:. */
		if (w->outcome[i] == INGEST_FAILED) {
			writer_exec(w, "ROLLBACK");
			return ERR_DB;
		}
		if (w->outcome[i] == INGEST_STORED && w->seq[i] > last)
			last = w->seq[i];
	}
	w->unpublished = n;
	if ((w->search && search_index_prune_gone(w->db, &w->s->search, &w->gone_pruned)) ||
	    writer_exec(w, "COMMIT")) {
		/* Only the sync can fail once the hook has run; whether the
		 * commit is in the file is then for WAL recovery to say, and
		 * subscribers may already have its events. */
		if (!w->unpublished)
			fatalx("the WAL's sync failed after its events were delivered: restarting");
		w->unpublished = 0;
		writer_exec(w, "ROLLBACK");
		return ERR_DB;
	}
	/* A search that may include them then knows the index has to reach
	 * them, and a history bounded by the broadcaster's last seq can read
	 * them. */
	atomic_fetch_add(&w->s->stats.commits, 1);
	if (w->search)
		search_watermark_committed(&w->s->search, last);
	visible_mark_advance(&w->s->visible, last);
	writer_publish(w);
	return 0;
}

static void writer_finish(struct writer *w, size_t n, int committed)
{
	struct stored_stats *st = &w->s->stats;

	for (size_t i = 0; i < n; i++) {
		enum ingest_outcome o = committed ? w->outcome[i] : INGEST_FAILED;
		/* The broadcaster heard of the event (writer_publish) before its
		 * author does: a REQ sent after the OK then reaches the
		 * broadcaster after the event, so its history bound includes it. */
		writer_note_result(w, i, w->batch[i]->event.id, o, w->why[i]);
		writer_count_reject(st, writer_message(o, w->why[i]));
		if (o == INGEST_STORED) {
			atomic_fetch_add(&st->events_accepted, 1);
		} else if (o == INGEST_FAILED || o == INGEST_REFUSED) {
			atomic_fetch_add(&st->events_rejected, 1);
		} else {
			atomic_fetch_add(&st->events_duplicate, 1);
		}
	}
	writer_send_results(w);
	for (size_t i = 0; i < n; i++)
		write_job_free(w->batch[i]);
}

/* Frees the writer and what it holds (any part may be missing). */
static void writer_free(struct writer *w)
{
	checkpointer_stop(w->checkpointer);
	search_index_close(w->search);
	ingest_free(w->ingest);
	db_close(w->db);
	free(w->batch);
	free(w->outcome);
	free(w->seq);
	free(w->forward);
	free(w->why);
	free(w->results);
	free(w->result_to);
	free(w->group);
	free(w->sent);
	free(w);
}

/*
 * Runs an operator's job.  A delete that matches by search waits, as a
 * searcher does, for the index to hold every event committed before it,
 * and reads search.db through an attachment made for it alone: the
 * writer's own commits never open that file (with it attached, each
 * BEGIN IMMEDIATE would also start a read of it).
 */
static void writer_run_op(struct writer *w, struct admin_job *op)
{
	bool searching = w->search && op->op == ADMIN_OP_DELETE &&
			 query_searches(w->s, op->filters, op->nfilters);

	if (searching) {
		search_watermark_await(&w->s->search, 0, (int)w->s->cfg.query_time_limit_ms);
		/* On failure the delete's statement finds no events_fts and
		 * the operator gets its error. */
		searching = db_attach(w->db, w->s->search_path, "search") == 0;
	}
	maint_run(w->db, op);
	if (searching)
		sql_exec(w->db, "DETACH DATABASE search");
	writer_committed_deletions(w);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	size_t n;

	pthread_setname_np(pthread_self(), "writer"); /* for top -H, perf */
	prio_set_this_thread((int)w->s->cfg.writer_nice);
	for (;;) {
		n = writer_collect(w);
		if (n) {
			writer_finish(w, n, writer_apply(w, n) == 0);
			writer_checkpoint(w);
		}
		if (!w->op && !n)
			break;
		if (w->op) {
			writer_run_op(w, w->op->admin);
			write_job_free(w->op); /* wakes the admin thread */
			w->op = NULL;
		}
	}
	writer_free(w);
	return NULL;
}

/* Applies wal_max_mb (checkpoint.h); on failure the checkpointer keeps its
 * default bound, and the operator is told why. */
static void writer_limit_wal(struct writer *w)
{
	int rc = checkpointer_limit_wal(w->checkpointer, w->db, (int64_t)w->s->cfg.wal_max_mb << 20);

	if (rc == ERR_INVAL)
		log_warnx("wal_max_mb = %u holds too few pages of this database's size; keeping the"
			  " default bound", w->s->cfg.wal_max_mb);
	else if (rc)
		log_warnx("cannot limit the WAL file's size: %s", sqlite3_errmsg(w->db));
}

/* The full-text index and its thread (search = 1), or its removal. */
static int writer_open_search(struct writer *w)
{
	struct stored *s = w->s;

	if (!s->cfg.search)
		return search_index_remove(w->db, s->search_path);
	if (!(w->search = search_index_open(s->db_path, s->search_path, &s->search,
					    s->cfg.search_index_batch,
					    s->cfg.search_index_delay_ms)) ||
	    search_index_track_deletions(w->db, &s->search) ||
	    search_index_start(w->search, (int)s->cfg.writer_nice))
		return ERR_DB;
	return 0;
}

int writer_start(struct stored *s, pthread_t *thread)
{
	struct writer *w = calloc(1, sizeof(*w));
	size_t n = s->cfg.commit_batch;

	if (!w)
		return ERR_NOMEM;
	w->s = s;
	/* Before the rpc thread starts, which checks it too. */
	diskwatch_init(&s->disk, s->cfg.data_dir, s->cfg.disk_reserve_mb);
	w->last_expiry = INT64_MIN / 2; /* the expiry job runs at the first wait */
	w->batch = calloc(n, sizeof(*w->batch));
	w->outcome = calloc(n, sizeof(*w->outcome));
	w->seq = calloc(n, sizeof(*w->seq));
	w->forward = calloc(n, sizeof(*w->forward));
	w->why = calloc(n, sizeof(*w->why));
	w->results = calloc(n, sizeof(*w->results));
	w->result_to = calloc(n, sizeof(*w->result_to));
	w->group = calloc(n, sizeof(*w->group));
	w->sent = calloc(n, sizeof(*w->sent));
	if (!w->batch || !w->outcome || !w->seq || !w->forward || !w->why || !w->results || !w->result_to ||
	    !w->group || !w->sent ||
	    db_open(s->db_path, true, s->cfg.db_synchronous, &w->db) ||
	    !(w->ingest = ingest_new(w->db)) || writer_open_search(w)) {
		writer_free(w);
		return ERR_DB;
	}
	w->checkpointer =
	    checkpointer_start(s->db_path, s->cfg.db_synchronous, (int)s->cfg.writer_nice);
	if (w->checkpointer)
		writer_limit_wal(w);
	if (w->checkpointer)
		sqlite3_wal_hook(w->db, writer_wal_hook, w);
	else
		log_warnx("no checkpoint thread: the writer checkpoints as it commits");
	/* Only with full does every commit sync, so that the commit frame a
	 * sync finds unsynced is the batch's own.  With normal there is no
	 * sync to overlap, and without the WAL buffer no hook: events are
	 * then published after the commit. */
	if (strcmp(s->cfg.db_synchronous, "full") == 0)
		walbuf_on_commit_written(w->db, (struct walbuf_hook){ writer_commit_written, w });
	if (pthread_create(thread, NULL, writer_main, w)) {
		writer_free(w);
		return ERR_DB;
	}
	return 0;
}
