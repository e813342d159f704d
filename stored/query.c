/* query.c - history queries, one read connection per thread (see query.h). */
#include "query.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/prio.h"
#include "../common/slice.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "db.h"
#include "hll.h"
#include "jobs.h"
#include "query_sql.h"
#include "queue.h"
#include "turnqueue.h"
#include "stored.h"
#include "reply.h"
#include "stmt_cache.h"

/* Statements kept per query thread: the filter shapes clients repeat (by
 * number of values, fields and tag letters) fit many times over. */
#define QUERY_STMTS_KEPT 64
/* The most events a replay of lost deliveries, or a resume, sends one
 * subscription (the newest of them, like any history). */
#define QUERY_REPLAY_MAX 100000

struct query_worker {
	struct stored *s;
	bool light; /* kept for connections known cheap (query_threads_light) */
	uint32_t *private_kinds; /* private_kinds, parsed */
	uint32_t nprivate;
	sqlite3 *db;
	struct stmt_cache *stmts; /* history statements, by text */
	/* The current job's pending chunk. */
	struct msg_str *events;
	uint32_t nevents, cap;
	size_t bytes;
	/* seqs already sent for this job (open addressing, 0 = empty). */
	int64_t *seen;
	size_t seen_cap;
	struct buf out;
	int64_t deadline_us; /* the current job's time budget ends (monotonic) */
	bool timed_out;
	bool cut; /* stored is stopping: the job ends and answers nothing */
};

/* Whether stored is stopping.  A job then answers nothing: the workers ask
 * again for every history left open when stored comes back. */
static bool query_stopping(const struct query_worker *q)
{
	return atomic_load_explicit(&q->s->stopping, memory_order_relaxed);
}

/* SQLite calls this every few thousand VM steps: past the job's budget it
 * interrupts the statement, so one scan cannot hold a query thread (and the
 * clients queued behind it) for long.  A stop interrupts it too, so that
 * SIGTERM is not held up by heavy queries. */
static int query_progress(void *arg)
{
	struct query_worker *q = arg;

	if (query_stopping(q)) {
		q->cut = true;
		return 1;
	}
	if (deadline_now_us() < q->deadline_us)
		return 0;
	q->timed_out = true;
	return 1;
}

static int query_seen_insert(struct query_worker *q, int64_t seq)
{
	size_t mask = q->seen_cap - 1;
	size_t i = (size_t)(seq * 0x9E3779B97F4A7C15ull) & mask;

	while (q->seen[i]) {
		if (q->seen[i] == seq)
			return 0;
		i = (i + 1) & mask;
	}
	q->seen[i] = seq;
	return 1;
}

/* Frees the pending chunk unsent. */
static void query_drop_chunk(struct query_worker *q)
{
	for (uint32_t i = 0; i < q->nevents; i++)
		free((char *)q->events[i].ptr);
	q->nevents = 0;
	q->bytes = 0;
}

/* Sends the pending chunk: as QUERY_EVENTS, or with last as QUERY_LAST,
 * which also ends the history (even with no events pending). */
static void query_send_chunk(struct query_worker *q, const struct query_job *job, bool last)
{
	struct msg_header h = msg_header_for(job->to.worker, job->to.request_id);
	struct msg_query_last m = { { job->conn_id, job->sub_serial, q->nevents, q->events },
				    (uint64_t)job->max_seq };
	int rc;

	if (q->nevents == 0 && !last)
		return;
	buf_reset(&q->out);
	rc = last ? msg_encode_query_last(&q->out, &h, &m)
		  : msg_encode_query_events(&q->out, &h, &m.events);
	if (rc == 0)
		reply_send(q->s, &job->to, q->out.data, q->out.len);
	query_drop_chunk(q);
}

static int query_add(struct query_worker *q, const struct query_job *job, const char *json, int len)
{
	char *copy;

	if (q->nevents == q->cap || q->bytes + (size_t)len > QUERY_CHUNK_BYTES)
		query_send_chunk(q, job, false);
	copy = malloc((size_t)len);
	if (!copy)
		return ERR_NOMEM;
	memcpy(copy, json, (size_t)len);
	q->events[q->nevents++] = (struct msg_str){ copy, (uint32_t)len };
	q->bytes += (size_t)len;
	return 0;
}

static uint32_t query_limit(const struct stored *s, const struct query_job *job,
			    const struct filter *f)
{
	uint32_t max = s->cfg.max_limit;

	/* A replay sends again what a worker lost, and a resume what a live
	 * subscription missed while its worker was cut off from stored: all
	 * of it, however many (a range holds at most one event per commit
	 * seq), up to a bound; the filter's limit was for its history. */
	if (job->replay || job->resume)
		return job->max_seq - job->min_seq < QUERY_REPLAY_MAX
			       ? (uint32_t)(job->max_seq - job->min_seq)
			       : QUERY_REPLAY_MAX;
	return f->has_limit && f->limit < max ? f->limit : max;
}

static int query_filter(struct query_worker *q, const struct query_job *job, const struct filter *f)
{
	uint32_t limit = query_limit(q->s, job, f);
	sqlite3_stmt *st;
	int rc;

	/* A replay (SUB_REPLAY) names no viewers and has no limit to protect:
	 * its private events are left to the worker's own check. */
	struct query_scope scope = { job->min_seq, job->max_seq, (int64_t)time(NULL), limit,
				     q->s->cfg.search != 0, job->replay,
				     job->replay ? NULL : q->private_kinds,
				     job->replay ? 0 : q->nprivate,
				     (const uint8_t(*)[32])job->viewers, job->nviewers };

	if (limit == 0 || filter_is_empty(f) || job->max_seq <= job->min_seq)
		return 0;
	if (f->search && !scope.search)
		return 0;
	if (query_sql_take_scoped(q->db, q->stmts, f, &scope, &st))
		return ERR_DB;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!query_seen_insert(q, sqlite3_column_int64(st, 0)))
			continue;
		if (query_add(q, job, (const char *)sqlite3_column_text(st, 1), sqlite3_column_bytes(st, 1)))
			break;
	}
	stmt_cache_release(q->stmts, st);
	return rc == SQLITE_DONE ? 0 : ERR_DB;
}

static const char query_too_long[] =
	"error: the query took too long; narrow the filter (fewer values, a since, a limit)";

/* A history that failed ends with QUERY_DONE (CLOSED) and why; one that
 * succeeded ends with QUERY_LAST (query_send_chunk). */
static void query_fail(struct query_worker *q, const struct query_job *job)
{
	reply_query_closed(q->s, &job->to, job->conn_id, job->sub_serial, job->max_seq,
			   q->timed_out ? query_too_long : "error: the query failed");
}

/* Sized for this job alone: one large replay (up to QUERY_REPLAY_MAX rows
 * per filter) must not leave every later job clearing megabytes. */
static int query_prepare_seen(struct query_worker *q, const struct query_job *job)
{
	size_t want = 16, cap = 1024;

	for (uint32_t i = 0; i < job->nfilters; i++)
		want += 2 * (size_t)query_limit(q->s, job, &job->filters[i]);
	while (cap < want)
		cap *= 2;
	if (cap == q->seen_cap && q->seen) {
		memset(q->seen, 0, cap * sizeof(int64_t));
		return 0;
	}
	free(q->seen);
	q->seen = calloc(cap, sizeof(int64_t));
	q->seen_cap = q->seen ? cap : 0;
	return q->seen ? 0 : ERR_NOMEM;
}

static void query_history(struct query_worker *q, struct query_job *job);

static int query_count_rows(struct query_worker *q, const struct query_job *job,
			    const struct query_scope *scope, uint64_t *count)
{
	sqlite3_stmt *st;
	int rc;

	if (query_sql_prepare_count(q->db, job->filters, job->nfilters, scope, &st))
		return ERR_DB;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : ERR_DB;
}

/* Fills registers when the COUNT is one eligible filter; returns whether. */
static bool query_count_hll(struct query_worker *q, const struct query_job *job,
			    const struct query_scope *scope, uint8_t *registers)
{
	int offset = job->nfilters == 1 ? hll_offset(&job->filters[0]) : -1;
	sqlite3_stmt *st;
	int rc;

	if (offset < 0 || query_sql_prepare_pubkeys(q->db, &job->filters[0], scope, &st))
		return false;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (sqlite3_column_bytes(st, 0) == 32)
			hll_add(registers, offset, sqlite3_column_blob(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE;
}

/* NIP-45: one COUNT_RESULT, the number of distinct matching events. */
static void query_count(struct query_worker *q, const struct query_job *job)
{
	const char *why = "error: the count failed";
	/* relayd refuses a COUNT that could count private events. */
	struct query_scope scope = { 0, job->max_seq, (int64_t)time(NULL), 0, q->s->cfg.search != 0,
				     false, NULL, 0, NULL, 0 };
	struct msg_header h = msg_header_for(job->to.worker, job->to.request_id);
	struct msg_count_result r = { .conn_id = job->conn_id,
				      .sub_id = { job->sub_id, job->sub_id_len } };

	if (query_count_rows(q, job, &scope, &r.count)) {
		if (q->cut)
			return;
		r.status = MSG_QUERY_CLOSED;
		if (q->timed_out)
			why = query_too_long;
		r.message = (struct msg_str){ why, (uint32_t)strlen(why) };
	} else {
		r.has_hll = query_count_hll(q, job, &scope, r.hll);
		if (q->cut)
			return;
	}
	buf_reset(&q->out);
	if (msg_encode_count_result(&q->out, &h, &r) == 0)
		reply_send(q->s, &job->to, q->out.data, q->out.len);
	atomic_fetch_add(&q->s->stats.queries, 1);
}

/* Adds one query's duration to stored's histogram (atomics: the pool's
 * threads all add to it). */
static void query_observe(struct stored *s, int64_t started_us)
{
	uint64_t us = (uint64_t)(deadline_now_us() - started_us);
	int i = 0;

	while (i < HISTO_BUCKETS - 1 && us > histo_bounds_us[i])
		i++;
	atomic_fetch_add(&s->stats.query_latency[i], 1);
	atomic_fetch_add(&s->stats.query_latency_sum_us, us);
}

bool query_searches(const struct stored *s, const struct filter *filters, uint32_t n)
{
	for (uint32_t i = 0; s->cfg.search && i < n; i++)
		if (filters[i].search)
			return true;
	return false;
}

/* Appends one row's (created_at, id) to *items; returns 0 or ERR_NOMEM. */
static int query_neg_add(sqlite3_stmt *st, struct neg_item **items, size_t *n, size_t *cap)
{
	int64_t created_at = sqlite3_column_int64(st, 0);

	if (sqlite3_column_bytes(st, 1) != NEG_ID_LEN)
		return 0; /* no such row is ever written */
	if (*n == *cap) {
		size_t want = *cap ? *cap * 2 : 1024;
		struct neg_item *grown = realloc(*items, want * sizeof(**items));

		if (!grown)
			return ERR_NOMEM;
		*items = grown;
		*cap = want;
	}
	(*items)[*n].ts = created_at < 0 ? 0 : (uint64_t)created_at;
	memcpy((*items)[*n].id, sqlite3_column_blob(st, 1), NEG_ID_LEN);
	(*n)++;
	return 0;
}

/* NIP-77: the (created_at, id) of every event a REQ with the session's
 * filter would show its connection, at most neg_max_records, sorted and
 * handed to the session thread (negsess.h) on its queue. */
static void query_neg(struct query_worker *q, const struct query_job *job)
{
	const struct filter *f = &job->filters[0];
	uint32_t max = q->s->cfg.neg_max_records;
	uint32_t limit = f->has_limit && f->limit <= max ? f->limit : max + 1;
	struct query_scope scope = { 0, job->max_seq, (int64_t)time(NULL), limit,
				     q->s->cfg.search != 0, false, q->private_kinds, q->nprivate,
				     (const uint8_t(*)[32])job->viewers, job->nviewers };
	struct neg_job *done = calloc(1, sizeof(*done));
	enum neg_read status = NEG_READ_OK;
	struct neg_item *items = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE;

	if (limit && !filter_is_empty(f) && !(f->search && !scope.search)) {
		if (query_sql_prepare_neg(q->db, f, &scope, &st))
			rc = SQLITE_ERROR;
		while (st && (rc = sqlite3_step(st)) == SQLITE_ROW)
			if (query_neg_add(st, &items, &n, &cap))
				break;
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_DONE)
		status = NEG_READ_FAILED;
	else if (n > max)
		status = NEG_READ_TOO_MANY;
	if (q->cut || !done || status != NEG_READ_OK) {
		free(items);
		items = NULL;
		n = 0;
	}
	if (q->cut || !done) { /* the session is swept when its read never comes back */
		free(done);
		return;
	}
	neg_sort(items, n);
	*done = (struct neg_job){ .kind = NEG_JOB_ITEMS, .serial = job->neg_serial,
				  .status = status, .items = items, .nitems = n };
	filter_init(&done->filter);
	if (!q->s->neg_q || queue_push(q->s->neg_q, done))
		neg_job_free(done);
	atomic_fetch_add(&q->s->stats.queries, 1);
}

static void query_run(struct query_worker *q, struct query_job *job)
{
	int64_t started = deadline_now_us();

	q->deadline_us = started + (int64_t)(job->neg ? q->s->cfg.neg_read_ms
						       : q->s->cfg.query_time_limit_ms) * 1000;
	q->timed_out = false;
	q->cut = query_stopping(q);
	if (q->cut)
		return;
	/* INT64_MAX: whatever is readable now (COUNT, restored subscriptions
	 * without a bound); otherwise the broadcaster's bound (visible.h). */
	if (job->max_seq != INT64_MAX &&
	    !visible_mark_wait(&q->s->visible, job->max_seq, (int)q->s->cfg.query_time_limit_ms))
		log_warnx("seq %lld not readable yet: the history may miss it",
			  (long long)job->max_seq);
	if (query_searches(q->s, job->filters, job->nfilters))
		search_watermark_await(&q->s->search, job->max_seq == INT64_MAX ? 0 : job->max_seq,
				       (int)q->s->cfg.query_time_limit_ms);
	if (job->count)
		query_count(q, job);
	else if (job->neg)
		query_neg(q, job);
	else
		query_history(q, job);
	query_observe(q->s, started);
}

static void query_history(struct query_worker *q, struct query_job *job)
{
	int failed = query_prepare_seen(q, job);

	for (uint32_t i = 0; i < job->nfilters && !failed; i++)
		failed = query_filter(q, job, &job->filters[i]);
	if (q->cut) {
		query_drop_chunk(q);
		return;
	}
	if (failed) {
		query_send_chunk(q, job, false);
		query_fail(q, job);
	} else {
		query_send_chunk(q, job, true);
	}
	atomic_fetch_add(&q->s->stats.queries, 1);
}

/* The connection a job answers: the pool takes its jobs in turn with
 * other connections', and holds at most query_threads_per_conn threads
 * for them at once (turnqueue.h). */
static struct turn_sender query_sender(const struct query_job *job)
{
	return (struct turn_sender){ job->to.worker, job->conn_id };
}

const char *query_submit(struct stored *s, struct query_job *job)
{
	int rc = turnqueue_push(s->query_q, query_sender(job), job);

	if (rc == 0)
		return NULL;
	if (rc == ERR_TOOBIG)
		return "rate-limited: too many queries of this connection are waiting; wait for"
		       " their answers";
	log_warnx("query queue full: a %s is refused",
		  job->count ? "COUNT" : job->replay ? "replay of lost deliveries" : "REQ");
	return "error: the relay is overloaded, retry";
}

/* CPU time this thread has used, in ns: what a job cost, told to the
 * queue so that a connection whose jobs are dear runs on fewer threads
 * (query_threads_light).  CPU, not wall time: a cheap job that waited for
 * a core on a busy machine must not count as heavy. */
static uint64_t query_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *query_main(void *arg)
{
	struct query_worker *q = arg;
	struct query_job *job;
	struct turn_sender from;

	/* Named for top -H and perf; the kept threads keep the priority of the
	 * threads that answer clients, the others run at query_nice, so that
	 * heavy queries let a cheap REQ have a core (turnqueue_pop_light()). */
	pthread_setname_np(pthread_self(), q->light ? "query-light" : "query");
	if (!q->light)
		prio_set_this_thread((int)q->s->cfg.query_nice);
	slice_set_this_thread(q->s->cfg.request_slice_us);
	while ((job = q->light ? turnqueue_pop_light(q->s->query_q, &from)
			       : turnqueue_pop(q->s->query_q, &from))) {
		uint64_t cpu = query_thread_cpu_ns();

		query_run(q, job);
		query_job_free(job);
		turnqueue_done(q->s->query_q, from, query_thread_cpu_ns() - cpu);
	}
	stmt_cache_free(q->stmts);
	db_close(q->db);
	free(q->events);
	free(q->seen);
	free(q->private_kinds);
	buf_free(&q->out);
	free(q);
	return NULL;
}

/* The kinds in private_kinds, into a new array; 0 without any (or without
 * memory: relayd still hides them). */
static uint32_t query_parse_private_kinds(const char *text, uint32_t **out)
{
	size_t n = config_kinds(text, NULL, 0);

	*out = n ? calloc(n, sizeof(**out)) : NULL;
	if (!*out)
		return 0;
	return (uint32_t)config_kinds(text, *out, n);
}

size_t query_threads_kept(const struct config *cfg)
{
	size_t n = cfg->query_threads;

	return cfg->query_threads_light < n ? cfg->query_threads_light : n - 1;
}

int query_start(struct stored *s, pthread_t *threads, size_t n)
{
	size_t kept = query_threads_kept(&s->cfg);

	for (size_t i = 0; i < n; i++) {
		struct query_worker *q = calloc(1, sizeof(*q));

		if (!q)
			return ERR_NOMEM;
		q->s = s;
		q->light = i < kept;
		q->nprivate = query_parse_private_kinds(s->cfg.private_kinds, &q->private_kinds);
		q->cap = 256;
		q->events = calloc(q->cap, sizeof(*q->events));
		if (!q->events || db_open(s->db_path, false, NULL, &q->db) ||
		    !(q->stmts = stmt_cache_new(q->db, QUERY_STMTS_KEPT)) ||
		    (sqlite3_progress_handler(q->db, 1000, query_progress, q), 0) ||
		    pthread_create(&threads[i], NULL, query_main, q)) {
			stmt_cache_free(q->stmts);
			db_close(q->db);
			free(q->events);
			free(q->private_kinds);
			free(q);
			return ERR_DB;
		}
	}
	return 0;
}
