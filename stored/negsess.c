/* negsess.c - the negentropy session thread and its table (see negsess.h). */
#include "negsess.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../common/prio.h"
#include "jobs.h"
#include "query.h"
#include "queue.h"
#include "reply.h"
#include "stored.h"

/* Jobs queued for the session thread; past it a NEG-OPEN or NEG-MSG gets
 * NEG-ERR error: at once. */
#define NEGSESS_QUEUE 4096
/* How often idle sessions are looked for. */
#define NEGSESS_SWEEP_MS 1000

struct negsess_session {
	struct rpc_return to; /* where its replies go (the latest request's) */
	uint64_t conn_id;
	char sub_id[MSG_SUB_ID_MAX];
	uint32_t sub_id_len;
	uint64_t serial;      /* tells its items from a replaced session's */
	bool reading;         /* its items are being read */
	uint8_t *first;       /* while reading: the NEG-OPEN message; owned */
	size_t first_len;
	struct neg_item *items; /* sorted; owned */
	size_t nitems;
	int64_t last_ms;      /* its last message (monotonic) */
};

struct negsess {
	struct stored *s;
	pthread_t thread;
	struct negsess_session **sessions; /* neg_sessions_max slots, NULL when free */
	uint32_t cap;
	uint64_t next_serial;
	struct buf out, reply;
};

static void negsess_session_free(struct negsess_session *ss)
{
	if (!ss)
		return;
	free(ss->first);
	free(ss->items);
	free(ss);
}

/* ---- replies ---- */

static void negsess_send(struct negsess *n, const struct rpc_return *to, uint64_t conn_id,
			 const char *sub_id, uint32_t sub_id_len, uint8_t status,
			 const void *payload, size_t len)
{
	struct msg_header h = msg_header_for(to->worker, to->request_id);
	struct msg_neg_reply r = { conn_id, { sub_id, sub_id_len }, status,
				   { payload, (uint32_t)len } };

	buf_reset(&n->reply);
	if (msg_encode_neg_reply(&n->reply, &h, &r) == 0)
		reply_send(n->s, to, n->reply.data, n->reply.len);
}

static void negsess_err_to(struct negsess *n, const struct rpc_return *to, uint64_t conn_id,
			   const char *sub_id, uint32_t sub_id_len, const char *why)
{
	negsess_send(n, to, conn_id, sub_id, sub_id_len, MSG_NEG_ERROR, why, strlen(why));
}

/* ---- the table ---- */

static bool negsess_same(const struct negsess_session *ss, uint16_t worker, uint64_t conn_id,
			 const char *sub_id, uint32_t len)
{
	return ss->to.worker == worker && ss->conn_id == conn_id && ss->sub_id_len == len &&
	       memcmp(ss->sub_id, sub_id, len) == 0;
}

/* The slot of the session so named, or -1. */
static int negsess_find(struct negsess *n, uint16_t worker, uint64_t conn_id, const char *sub_id,
			uint32_t len)
{
	for (uint32_t i = 0; i < n->cap; i++)
		if (n->sessions[i] && negsess_same(n->sessions[i], worker, conn_id, sub_id, len))
			return (int)i;
	return -1;
}

static void negsess_drop(struct negsess *n, int slot)
{
	negsess_session_free(n->sessions[slot]);
	n->sessions[slot] = NULL;
}

/* Ends the session in slot with NEG-ERR why. */
static void negsess_fail(struct negsess *n, int slot, const char *why)
{
	struct negsess_session *ss = n->sessions[slot];

	negsess_err_to(n, &ss->to, ss->conn_id, ss->sub_id, ss->sub_id_len, why);
	negsess_drop(n, slot);
}

/* Sessions of one connection, and a free slot (-1 when none). */
static uint32_t negsess_count_conn(struct negsess *n, uint16_t worker, uint64_t conn_id,
				   int *free_slot)
{
	uint32_t count = 0;

	*free_slot = -1;
	for (uint32_t i = 0; i < n->cap; i++) {
		const struct negsess_session *ss = n->sessions[i];

		if (!ss && *free_slot < 0)
			*free_slot = (int)i;
		else if (ss && ss->to.worker == worker && ss->conn_id == conn_id)
			count++;
	}
	return count;
}

/* ---- the work ---- */

/* Answers message with the session's items; a malformed one ends it. */
static void negsess_answer(struct negsess *n, int slot, const uint8_t *msg, size_t len)
{
	struct negsess_session *ss = n->sessions[slot];
	struct neg_side side = { false, NULL, NULL, NULL, false };
	int rc;

	buf_reset(&n->out);
	rc = neg_reconcile(ss->items, ss->nitems, msg, len, n->s->cfg.neg_frame_bytes, &side,
			   &n->out);
	if (rc == ERR_NOMEM) {
		negsess_fail(n, slot, "error: out of memory");
	} else if (rc) {
		negsess_fail(n, slot, "invalid: malformed negentropy message");
	} else {
		ss->last_ms = deadline_now_ms();
		negsess_send(n, &ss->to, ss->conn_id, ss->sub_id, ss->sub_id_len, MSG_NEG_MESSAGE,
			     n->out.data, n->out.len);
	}
}

/* Asks the query pool for the session's items. */
static const char *negsess_submit_read(struct negsess *n, struct negsess_session *ss,
				       struct neg_job *j)
{
	struct query_job *q = calloc(1, sizeof(*q));
	const char *refused;

	if (!q || !(q->filters = calloc(1, sizeof(*q->filters)))) {
		free(q);
		return "error: out of memory";
	}
	q->to = j->to;
	q->conn_id = j->conn_id;
	q->nfilters = 1;
	q->filters[0] = j->filter;
	filter_init(&j->filter);
	q->viewers = j->viewers;
	q->nviewers = j->nviewers;
	j->viewers = NULL;
	q->max_seq = INT64_MAX; /* everything committed when it runs */
	q->neg = true;
	q->neg_serial = ss->serial;
	refused = query_submit(n->s, q);
	if (refused)
		query_job_free(q);
	return refused;
}

/* Answers a first message that needs no items: a malformed one (NEG-ERR)
 * or one of another version (the byte 0x61, and no session).  Checked
 * against no items, so a bad NEG-OPEN never costs a read.  Returns
 * whether it answered. */
static bool negsess_open_answered(struct negsess *n, const struct neg_job *j)
{
	struct neg_side side = { false, NULL, NULL, NULL, false };
	int rc;

	buf_reset(&n->out);
	rc = neg_reconcile(NULL, 0, j->message, j->message_len, n->s->cfg.neg_frame_bytes, &side,
			   &n->out);
	if (rc)
		negsess_err_to(n, &j->to, j->conn_id, j->sub_id, j->sub_id_len,
			       rc == ERR_NOMEM ? "error: out of memory"
					       : "invalid: malformed negentropy message");
	else if (j->message[0] != NEG_VERSION)
		negsess_send(n, &j->to, j->conn_id, j->sub_id, j->sub_id_len, MSG_NEG_MESSAGE,
			     n->out.data, n->out.len);
	return rc || j->message[0] != NEG_VERSION;
}

static void negsess_on_open(struct negsess *n, struct neg_job *j)
{
	const struct config *cfg = &n->s->cfg;
	int slot = negsess_find(n, j->to.worker, j->conn_id, j->sub_id, j->sub_id_len);
	struct negsess_session *ss;
	const char *why;
	uint32_t mine;

	if (slot >= 0) /* NIP-77: a NEG-OPEN of an open id replaces it */
		negsess_drop(n, slot);
	if (negsess_open_answered(n, j))
		return;
	mine = negsess_count_conn(n, j->to.worker, j->conn_id, &slot);
	if (mine >= cfg->neg_sessions_per_conn || slot < 0) {
		negsess_err_to(n, &j->to, j->conn_id, j->sub_id, j->sub_id_len,
			       mine >= cfg->neg_sessions_per_conn
				       ? "blocked: too many negentropy sessions on this connection"
				       : "blocked: the relay has too many negentropy sessions open");
		return;
	}
	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		negsess_err_to(n, &j->to, j->conn_id, j->sub_id, j->sub_id_len, "error: out of memory");
		return;
	}
	ss->to = j->to;
	ss->conn_id = j->conn_id;
	memcpy(ss->sub_id, j->sub_id, j->sub_id_len);
	ss->sub_id_len = j->sub_id_len;
	ss->serial = ++n->next_serial;
	ss->reading = true;
	ss->last_ms = deadline_now_ms();
	ss->first = j->message;
	ss->first_len = j->message_len;
	j->message = NULL;
	n->sessions[slot] = ss;
	if ((why = negsess_submit_read(n, ss, j)))
		negsess_fail(n, slot, why);
}

static void negsess_on_items(struct negsess *n, struct neg_job *j)
{
	int slot = -1;
	struct negsess_session *ss;
	char why[128];

	for (uint32_t i = 0; i < n->cap && slot < 0; i++)
		if (n->sessions[i] && n->sessions[i]->serial == j->serial)
			slot = (int)i;
	if (slot < 0)
		return; /* closed or replaced while it was read */
	ss = n->sessions[slot];
	if (j->status == NEG_READ_TOO_MANY) {
		snprintf(why, sizeof(why), "blocked: the filter matches more than %u events; narrow it",
			 n->s->cfg.neg_max_records);
		negsess_fail(n, slot, why);
		return;
	}
	if (j->status != NEG_READ_OK) {
		negsess_fail(n, slot, "error: the query failed or took too long; narrow the filter");
		return;
	}
	ss->items = j->items;
	ss->nitems = j->nitems;
	j->items = NULL;
	ss->reading = false;
	negsess_answer(n, slot, ss->first, ss->first_len);
	if (n->sessions[slot] == ss) {
		free(ss->first);
		ss->first = NULL;
	}
}

static void negsess_on_msg(struct negsess *n, struct neg_job *j)
{
	int slot = negsess_find(n, j->to.worker, j->conn_id, j->sub_id, j->sub_id_len);

	if (slot < 0) {
		negsess_err_to(n, &j->to, j->conn_id, j->sub_id, j->sub_id_len,
			       "closed: no such negentropy session");
		return;
	}
	n->sessions[slot]->to = j->to;
	if (n->sessions[slot]->reading) {
		negsess_fail(n, slot, "invalid: NEG-MSG before the answer to NEG-OPEN");
		return;
	}
	negsess_answer(n, slot, j->message, j->message_len);
}

/* Ends every session of worker (and of conn_id unless all). */
static void negsess_drop_where(struct negsess *n, uint16_t worker, uint64_t conn_id, bool all)
{
	for (uint32_t i = 0; i < n->cap; i++) {
		const struct negsess_session *ss = n->sessions[i];

		if (ss && ss->to.worker == worker && (all || ss->conn_id == conn_id))
			negsess_drop(n, (int)i);
	}
}

static void negsess_run(struct negsess *n, struct neg_job *j)
{
	int slot;

	switch (j->kind) {
	case NEG_JOB_OPEN: negsess_on_open(n, j); break;
	case NEG_JOB_MSG: negsess_on_msg(n, j); break;
	case NEG_JOB_ITEMS: negsess_on_items(n, j); break;
	case NEG_JOB_CLOSE:
		slot = negsess_find(n, j->to.worker, j->conn_id, j->sub_id, j->sub_id_len);
		if (slot >= 0)
			negsess_drop(n, slot);
		break;
	case NEG_JOB_CONN_CLOSED: negsess_drop_where(n, j->to.worker, j->conn_id, false); break;
	case NEG_JOB_WORKER_GONE: negsess_drop_where(n, j->to.worker, 0, true); break;
	}
}

/* Ends the sessions that waited longer than neg_idle_seconds for a message. */
static void negsess_sweep(struct negsess *n)
{
	int64_t now = deadline_now_ms(), idle = (int64_t)n->s->cfg.neg_idle_seconds * 1000;
	/* A read lost on its way back (a full queue) must not hold its slot. */
	int64_t reading = idle + (int64_t)n->s->cfg.query_time_limit_ms;
	char why[96];

	snprintf(why, sizeof(why), "closed: no message for %u seconds", n->s->cfg.neg_idle_seconds);
	for (uint32_t i = 0; i < n->cap; i++) {
		const struct negsess_session *ss = n->sessions[i];

		if (ss && now - ss->last_ms >= (ss->reading ? reading : idle))
			negsess_fail(n, (int)i, why);
	}
}

static void *negsess_main(void *arg)
{
	struct negsess *n = arg;
	int64_t next_sweep = deadline_now_ms() + NEGSESS_SWEEP_MS;

	/* At query_nice, as the query threads that take heavy jobs: a cheap
	 * REQ gets a core before a long reconciliation (bench/RESULTS.md). */
	pthread_setname_np(pthread_self(), "negentropy");
	prio_set_this_thread((int)n->s->cfg.query_nice);
	for (;;) {
		struct neg_job *j = queue_pop_timed(n->s->neg_q, NEGSESS_SWEEP_MS);

		if (!j && queue_closed(n->s->neg_q))
			break;
		if (j)
			negsess_run(n, j);
		neg_job_free(j);
		if (deadline_now_ms() >= next_sweep) {
			negsess_sweep(n);
			next_sweep = deadline_now_ms() + NEGSESS_SWEEP_MS;
		}
	}
	return NULL;
}

int negsess_start(struct stored *s)
{
	struct negsess *n = calloc(1, sizeof(*n));

	if (!n)
		return ERR_NOMEM;
	n->s = s;
	n->cap = s->cfg.neg_sessions_max;
	n->sessions = calloc(n->cap, sizeof(*n->sessions));
	n->s->neg_q = queue_new(NEGSESS_QUEUE);
	if (!n->sessions || !n->s->neg_q || pthread_create(&n->thread, NULL, negsess_main, n)) {
		queue_free(n->s->neg_q);
		n->s->neg_q = NULL;
		free(n->sessions);
		free(n);
		return ERR_NOMEM;
	}
	s->neg = n;
	return 0;
}

void negsess_stop(struct stored *s)
{
	struct negsess *n = s->neg;
	struct neg_job *j;

	if (!n)
		return;
	queue_close(n->s->neg_q);
	pthread_join(n->thread, NULL);
	while ((j = queue_pop_nowait(n->s->neg_q)))
		neg_job_free(j);
	for (uint32_t i = 0; i < n->cap; i++)
		negsess_session_free(n->sessions[i]);
	free(n->sessions);
	queue_free(n->s->neg_q);
	n->s->neg_q = NULL;
	buf_free(&n->out);
	buf_free(&n->reply);
	free(n);
	s->neg = NULL;
}

/* ---- the other threads' side: each queues one job ---- */

static struct neg_job *negsess_job_new(enum neg_job_kind kind, const struct rpc_return *to,
					   uint64_t conn_id, const struct msg_str *sub_id)
{
	struct neg_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	if (to)
		j->to = *to;
	j->conn_id = conn_id;
	filter_init(&j->filter);
	if (sub_id && sub_id->len <= MSG_SUB_ID_MAX) {
		memcpy(j->sub_id, sub_id->ptr, sub_id->len);
		j->sub_id_len = sub_id->len;
	}
	return j;
}

/* Queues j; a full queue answers a NEG-OPEN or NEG-MSG at once. */
static void negsess_push(struct stored *s, struct neg_job *j)
{
	if (!s->neg_q || queue_push(s->neg_q, j) == 0)
		return;
	if (j->kind == NEG_JOB_OPEN || j->kind == NEG_JOB_MSG) {
		struct negsess tmp = { .s = s };

		negsess_err_to(&tmp, &j->to, j->conn_id, j->sub_id, j->sub_id_len,
			       "error: the relay is overloaded, retry");
		buf_free(&tmp.reply);
	}
	neg_job_free(j);
}

static uint8_t *negsess_dup(const struct msg_str *m)
{
	uint8_t *p = malloc(m->len ? m->len : 1);

	if (p)
		memcpy(p, m->ptr, m->len);
	return p;
}

void negsess_open(struct stored *s, const struct rpc_return *to, struct msg_neg_open *m)
{
	struct neg_job *j = negsess_job_new(NEG_JOB_OPEN, to, m->conn_id, &m->sub_id);

	if (!j)
		return;
	j->filter = m->filter;
	filter_init(&m->filter);
	j->message = negsess_dup(&m->message);
	j->message_len = m->message.len;
	if (m->nviewers && (j->viewers = calloc(m->nviewers, 32))) {
		memcpy(j->viewers, m->viewers, (size_t)m->nviewers * 32);
		j->nviewers = m->nviewers;
	}
	if (!j->message) {
		neg_job_free(j);
		return;
	}
	negsess_push(s, j);
}

void negsess_msg(struct stored *s, const struct rpc_return *to, const struct msg_neg_msg *m)
{
	struct neg_job *j = negsess_job_new(NEG_JOB_MSG, to, m->conn_id, &m->sub_id);

	if (!j)
		return;
	j->message = negsess_dup(&m->message);
	j->message_len = m->message.len;
	if (!j->message) {
		neg_job_free(j);
		return;
	}
	negsess_push(s, j);
}

void negsess_close(struct stored *s, const struct rpc_return *to, const struct msg_neg_close *m)
{
	struct neg_job *j = negsess_job_new(NEG_JOB_CLOSE, to, m->conn_id, &m->sub_id);

	if (j)
		negsess_push(s, j);
}

void negsess_conn_closed(struct stored *s, uint16_t worker, uint64_t conn_id)
{
	struct rpc_return to = { .worker = worker };
	struct neg_job *j = negsess_job_new(NEG_JOB_CONN_CLOSED, &to, conn_id, NULL);

	if (j)
		negsess_push(s, j);
}

void negsess_worker_gone(struct stored *s, uint16_t worker)
{
	struct rpc_return to = { .worker = worker };
	struct neg_job *j = negsess_job_new(NEG_JOB_WORKER_GONE, &to, 0, NULL);

	if (j)
		negsess_push(s, j);
}
