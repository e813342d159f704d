/* bcast.c - subscription index owner and live publisher (see bcast.h). */
#include "bcast.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/search.h"
#include "../common/slice.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "jobs.h"
#include "pub.h"
#include "query.h"
#include "queue.h"
#include "reply.h"
#include "stored.h"
#include "subidx.h"

/* Matches for one worker while one event is being delivered. */
struct bcast_targets {
	struct msg_target *items;
	uint32_t n, cap;
};

struct bcast_peer {
	uint32_t pipe;  /* 0: no live pipe */
	uint64_t boot_id;
	uint64_t seq;   /* last DELIVER number sent since the worker's HELLO */
	uint32_t hello_id; /* that HELLO's request id, stamped on each DELIVER */
};

struct bcast {
	struct stored *s;
	struct subidx *idx;
	int64_t last_seq;    /* the newest commit delivered */
	int64_t current_seq; /* the commit being delivered now (0: ephemeral) */
	struct bcast_peer peers[STORED_MAX_WORKERS];
	struct bcast_targets targets[STORED_MAX_WORKERS];
	uint16_t touched[STORED_MAX_WORKERS];
	uint32_t ntouched;
	struct buf out;
	/* Events delivered while their commit's sync ran (writer.h), in commit
	 * order, kept until a read transaction can see them: a subscription
	 * opened meanwhile reads its history up to what is readable and gets
	 * these from here.  At most about one commit's worth. */
	struct bcast_job **unsynced;
	size_t nunsynced, unsynced_cap;
};

static void bcast_collect(void *arg, uint16_t worker, uint64_t conn_id, uint32_t sub_serial)
{
	struct bcast *b = arg;
	struct bcast_targets *t;

	if (worker >= STORED_MAX_WORKERS)
		return;
	t = &b->targets[worker];
	if (t->n == 0)
		b->touched[b->ntouched++] = worker;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		struct msg_target *grown = realloc(t->items, cap * sizeof(*grown));

		if (!grown)
			return;
		t->items = grown;
		t->cap = cap;
	}
	t->items[t->n++] = (struct msg_target){ conn_id, sub_serial };
}

static void bcast_publish(struct bcast *b, uint16_t worker, const struct event *ev)
{
	struct bcast_targets *t = &b->targets[worker];
	struct msg_header h = msg_header_for(worker, b->peers[worker].hello_id);
	struct msg_deliver d = { ++b->peers[worker].seq, (uint64_t)b->current_seq,
				 { ev->json, ev->json_len }, t->n, t->items, ev->expiration };

	buf_reset(&b->out);
	if (msg_encode_deliver(&b->out, &h, &d) || pub_deliver(b->s, worker, b->out.data, b->out.len))
		return;
	atomic_fetch_add(&b->s->stats.deliveries, 1);
}

/* Drops the kept events a read transaction now sees. */
static void bcast_forget_synced(struct bcast *b)
{
	int64_t readable = atomic_load(&b->s->visible.seq);
	size_t gone = 0;

	while (gone < b->nunsynced && b->unsynced[gone]->seq <= readable)
		bcast_job_free(b->unsynced[gone++]);
	if (gone) {
		memmove(b->unsynced, b->unsynced + gone, (b->nunsynced - gone) * sizeof(*b->unsynced));
		b->nunsynced -= gone;
	}
}

/* Keeps a delivered event until it is readable; false if it already is
 * (or cannot be kept: then the history of a REQ opened now waits for it,
 * query.c). */
static bool bcast_keep_unsynced(struct bcast *b, struct bcast_job *job)
{
	if (job->kind != BCAST_EVENT || job->seq <= atomic_load(&b->s->visible.seq))
		return false;
	if (b->nunsynced == b->unsynced_cap) {
		size_t cap = b->unsynced_cap ? b->unsynced_cap * 2 : 64;
		struct bcast_job **grown = realloc(b->unsynced, cap * sizeof(*grown));

		if (!grown)
			return false;
		b->unsynced = grown;
		b->unsynced_cap = cap;
	}
	b->unsynced[b->nunsynced++] = job;
	return true;
}

/* For a subscription just registered whose history reads up to after_seq:
 * the kept events past that which match it, delivered to it alone (its
 * worker holds them until the history's EOSE). */
static void bcast_replay_unsynced(struct bcast *b, const struct query_job *q)
{
	int64_t after = q->max_seq > q->min_seq ? q->max_seq : q->min_seq;
	int64_t now = (int64_t)time(NULL);

	for (size_t i = 0; i < b->nunsynced; i++) {
		const struct bcast_job *e = b->unsynced[i];
		bool match = false;

		if (e->seq <= after || (e->event.expiration && e->event.expiration <= now))
			continue;
		for (uint32_t f = 0; f < q->nfilters && !match; f++)
			match = filter_matches(&q->filters[f], &e->event);
		if (!match)
			continue;
		b->current_seq = e->seq;
		b->ntouched = 0;
		bcast_collect(b, q->to.worker, q->conn_id, q->sub_serial);
		bcast_publish(b, q->to.worker, &e->event);
		b->targets[q->to.worker].n = 0;
	}
}

static void bcast_event(struct bcast *b, struct bcast_job *job)
{
	if (job->seq > b->last_seq)
		b->last_seq = job->seq;
	/* NIP-40: never delivered from the second it expires. */
	if (job->event.expiration && job->event.expiration <= (int64_t)time(NULL))
		return;
	b->current_seq = job->seq;
	b->ntouched = 0;
	subidx_match(b->idx, &job->event, bcast_collect, b);
	for (uint32_t i = 0; i < b->ntouched; i++) {
		uint16_t worker = b->touched[i];

		bcast_publish(b, worker, &job->event);
		b->targets[worker].n = 0;
	}
}

static void bcast_sync_counts(struct bcast *b)
{
	atomic_store(&b->s->stats.subscriptions, subidx_count(b->idx));
}

/* Registers the subscription at last_seq and queues its history query (or,
 * for a resumed subscription, the replay of what it missed). */
static void bcast_sub_open(struct bcast *b, struct bcast_job *job)
{
	struct query_job *q = NULL;
	const char *refused = NULL;

	if (job->flags & (MSG_SUB_HISTORY | MSG_SUB_RESUME)) {
		q = calloc(1, sizeof(*q));
		if (q) {
			q->to = job->to;
			q->conn_id = job->conn_id;
			q->sub_serial = job->sub_serial;
			q->resume = (job->flags & MSG_SUB_RESUME) != 0;
			q->min_seq = q->resume ? (int64_t)job->resume_after : 0;
			/* Not past what a read transaction sees now; the rest is
			 * replayed from the kept events below. */
			q->max_seq = b->last_seq;
			if (b->nunsynced && b->unsynced[0]->seq - 1 < q->max_seq)
				q->max_seq = b->unsynced[0]->seq - 1;
			q->nfilters = job->nfilters;
			q->filters = calloc(job->nfilters ? job->nfilters : 1, sizeof(struct filter));
			for (uint32_t i = 0; q->filters && i < job->nfilters; i++)
				filter_copy(&q->filters[i], &job->filters[i]);
			q->viewers = job->viewers;
			q->nviewers = job->nviewers;
			job->viewers = NULL;
			job->nviewers = 0;
		}
	}
	subidx_add(b->idx, job->to.worker, job->conn_id, job->sub_id, job->sub_id_len,
		   job->sub_serial, job->filters, job->nfilters);
	job->filters = NULL;
	job->nfilters = 0;
	if (q && q->filters)
		bcast_replay_unsynced(b, q);
	if (q && (refused = q->filters ? query_submit(b->s, q) : "error: out of memory")) {
		/* Its client must not wait for an EOSE that never comes. */
		reply_query_closed(b->s, &q->to, q->conn_id, q->sub_serial, q->max_seq, refused);
		query_job_free(q);
	}
	bcast_sync_counts(b);
}

static void bcast_hello(struct bcast *b, struct bcast_job *job)
{
	struct bcast_peer *p = &b->peers[job->to.worker];

	/* A worker sends HELLO on every new link and then re-sends every live
	 * subscription, so the old ones go, even when only its delivery pipe
	 * came back: a SUB_CLOSE or CONN_CLOSED it could not send meanwhile
	 * would otherwise leave one here for good. */
	subidx_remove_worker(b->idx, job->to.worker);
	p->pipe = job->to.pipe;
	p->boot_id = job->boot_id;
	/* Numbering from 1 again lets the worker count deliveries lost before
	 * the first one it receives (relayd/gapcount.h). */
	p->seq = 0;
	p->hello_id = job->to.request_id;
	bcast_sync_counts(b);
}

static void bcast_pipe_gone(struct bcast *b, struct bcast_job *job)
{
	for (int w = 0; w < STORED_MAX_WORKERS; w++) {
		if (b->peers[w].pipe == job->to.pipe) {
			size_t n = subidx_remove_worker(b->idx, (uint16_t)w);

			log_info("worker %d disconnected; dropped %zu subscriptions", w, n);
			b->peers[w].pipe = 0;
		}
	}
	bcast_sync_counts(b);
}

static int bcast_list_one(void *arg, uint16_t worker, uint64_t conn_id, const char *sub_id,
			  size_t sub_id_len, uint32_t serial, const struct filter *filters,
			  uint32_t nfilters)
{
	return admin_job_add_sub(arg, worker, conn_id, sub_id, sub_id_len, serial, filters,
				 nfilters);
}

/* The operator's listing: copies of the subscriptions, so the admin thread
 * formats them while this thread goes on delivering. */
static void bcast_list(struct bcast *b, struct bcast_job *job)
{
	struct admin_job *a = job->admin;

	if (!a)
		return;
	a->total_subs = subidx_count(b->idx);
	subidx_foreach(b->idx, bcast_list_one, a);
	a->rc = 0;
}

static void bcast_handle(struct bcast *b, struct bcast_job *job)
{
	if (job->to.worker >= STORED_MAX_WORKERS && job->kind != BCAST_EVENT &&
	    job->kind != BCAST_PIPE_GONE)
		return;
	switch (job->kind) {
	case BCAST_EVENT: bcast_event(b, job); break;
	case BCAST_HELLO: bcast_hello(b, job); break;
	case BCAST_SUB_OPEN: bcast_sub_open(b, job); break;
	case BCAST_SUB_CLOSE:
		subidx_remove(b->idx, job->to.worker, job->conn_id, job->sub_id, job->sub_id_len);
		bcast_sync_counts(b);
		break;
	case BCAST_CONN_CLOSED:
		subidx_remove_conn(b->idx, job->to.worker, job->conn_id);
		bcast_sync_counts(b);
		break;
	case BCAST_PIPE_GONE: bcast_pipe_gone(b, job); break;
	case BCAST_LIST: bcast_list(b, job); break;
	}
}

static void *bcast_main(void *arg)
{
	struct bcast *b = arg;
	struct bcast_job *job;

	pthread_setname_np(pthread_self(), "bcast"); /* for top -H, perf */
	slice_set_this_thread(b->s->cfg.request_slice_us);
	while ((job = queue_pop(b->s->bcast_q))) {
		bcast_forget_synced(b);
		bcast_handle(b, job);
		if (!bcast_keep_unsynced(b, job))
			bcast_job_free(job);
	}
	for (size_t i = 0; i < b->nunsynced; i++)
		bcast_job_free(b->unsynced[i]);
	free(b->unsynced);
	subidx_free(b->idx);
	for (int w = 0; w < STORED_MAX_WORKERS; w++)
		free(b->targets[w].items);
	buf_free(&b->out);
	free(b);
	search_thread_end(); /* the tokenizer live NIP-50 matching made, if any */
	return NULL;
}

int bcast_start(struct stored *s, int64_t last_seq, pthread_t *thread)
{
	struct bcast *b = calloc(1, sizeof(*b));

	if (!b)
		return ERR_NOMEM;
	b->s = s;
	b->last_seq = last_seq;
	b->idx = subidx_new();
	if (!b->idx || pthread_create(thread, NULL, bcast_main, b)) {
		subidx_free(b->idx);
		free(b);
		return ERR_NOMEM;
	}
	return 0;
}
