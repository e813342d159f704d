/* rpc.c - receiving and routing worker requests (see rpc.h). */
#include "rpc.h"

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/reqrep0/rep.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/listencheck.h"
#include "../common/log.h"
#include "../common/peerlink.h"
#include "../common/rundir.h"
#include "../proto/msg.h"
#include "diskwatch.h"
#include "gate.h"
#include "jobs.h"
#include "manage.h"
#include "negsess.h"
#include "plugin.h"
#include "plugin_wire.h"
#include "query.h"
#include "queue.h"
#include "recent.h"
#include "stored.h"
#include "reply.h"
#include "writer.h"

/* Ephemeral ids remembered to answer a repeat "duplicate:" (recent.h): at
 * least half this many of the latest, about 1 MiB of tables. */
#define RPC_EPHEMERAL_RECENT 16384

/* Largest request stored accepts: an event at the configured message limit
 * plus framing, never less than nng's usual 1 MiB. */
static size_t rpc_max_message(const struct stored *s)
{
	size_t want = (size_t)s->cfg.max_message_bytes * 2 + 65536;

	return want < 1048576 ? 1048576 : want;
}

/* Queues job for the broadcaster; returns 0, or -1 when the queue was full
 * (the job is freed and the drop logged). */
static int rpc_push_bcast(struct stored *s, struct bcast_job *job)
{
	if (queue_push(s->bcast_q, job)) {
		log_warnx("broadcast queue full: dropped a %d request", job->kind);
		bcast_job_free(job);
		return -1;
	}
	return 0;
}

static struct bcast_job *rpc_bcast_job(enum bcast_kind kind, const struct rpc_return *to)
{
	struct bcast_job *job = calloc(1, sizeof(*job));

	if (job) {
		job->kind = kind;
		job->to = *to;
	}
	return job;
}

static void rpc_hello(struct stored *s, const struct rpc_return *to, const void *body, size_t len)
{
	struct msg_hello m;
	struct msg_hello_ack ack = { s->boot_id };
	struct msg_header h = msg_header_for(to->worker, to->request_id);
	struct buf out = BUF_INIT;
	struct bcast_job *job;
	nng_pipe stale = NNG_PIPE_INITIALIZER;
	bool restarted;

	if (msg_decode_hello(body, len, &m) || to->worker >= STORED_MAX_WORKERS) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	pthread_mutex_lock(&s->workers_lock);
	if (s->workers[to->worker].present && s->workers[to->worker].pipe != to->pipe)
		stale.id = s->workers[to->worker].pipe;
	restarted = s->workers[to->worker].boot_id != m.boot_id;
	s->workers[to->worker] = (struct stored_worker_report){ .present = true, .pipe = to->pipe,
		.pid = m.pid, .boot_id = m.boot_id, .started_at = (uint64_t)time(NULL) };
	pthread_mutex_unlock(&s->workers_lock);
	log_info("worker %u (pid %u) connected", to->worker, m.pid);
	if (restarted) /* a new incarnation has no session open; a reconnect keeps them */
		negsess_worker_gone(s, to->worker);
	if (reply_open(s, to->worker, m.boot_id))
		log_warnx("no reply channel to worker %u", to->worker);
	job = rpc_bcast_job(BCAST_HELLO, to);
	if (job) {
		job->boot_id = m.boot_id;
		rpc_push_bcast(s, job);
	}
	/* A worker that dialled again over tcp may leave its old pipe half
	 * open (a pulled cable): close it, after the HELLO's job so that the
	 * broadcaster's PIPE_GONE for it finds the new pipe in place. */
	if (stale.id)
		nng_pipe_close(stale);
	if (msg_encode_hello_ack(&out, &h, &ack) == 0)
		reply_send(s, to, out.data, out.len);
	buf_free(&out);
}

/* The OK for one event the rpc thread answers itself (not the writer). */
static void rpc_answer_event(struct stored *s, const struct rpc_return *to, uint64_t conn_id,
			     const uint8_t *id, bool accepted, const char *why)
{
	struct msg_header h = msg_header_for(to->worker, to->request_id);
	struct msg_event_result r = { .conn_id = conn_id, .accepted = accepted,
				      .message = { why, (uint32_t)strlen(why) } };
	struct buf out = BUF_INIT;

	memcpy(r.id, id, EVENT_ID_LEN);
	if (msg_encode_event_result(&out, &h, &r) == 0)
		reply_send(s, to, out.data, out.len);
	buf_free(&out);
}

/* Ephemeral events skip the database: checked against the operator's
 * rules (gate.h), delivered, then acknowledged. */
static void rpc_ephemeral(struct stored *s, const struct rpc_return *to, struct msg_event_store *m)
{
	struct bcast_job *job;
	uint8_t id[EVENT_ID_LEN];
	const char *why = NULL;
	int refused = s->gate ? gate_refuses(s->gate, &m->event, &why) : ERR_DB;

	memcpy(id, m->event.id, EVENT_ID_LEN); /* the event moves to the job */
	if (refused) {
		if (refused < 0)
			why = "error: the relay's rules could not be checked, retry";
		writer_count_reject(&s->stats, why);
		rpc_answer_event(s, to, m->conn_id, id, false, why);
		return;
	}
	/* Sent twice (a retry, two connections): relayed once, and the second
	 * OK says so as it would for a stored event.  Without the set (no
	 * memory) every copy is relayed. */
	if (s->ephemeral_seen && recent_ids_has(s->ephemeral_seen, id)) {
		atomic_fetch_add(&s->stats.events_duplicate, 1);
		rpc_answer_event(s, to, m->conn_id, id, true,
				 "duplicate: this ephemeral event was relayed already");
		return;
	}
	job = rpc_bcast_job(BCAST_EVENT, to);
	if (!job) {
		rpc_answer_event(s, to, m->conn_id, id, false, "error: out of memory");
		return;
	}
	job->event = m->event;
	memset(&m->event, 0, sizeof(m->event));
	/* Only an event handed on counts as relayed: one refused here may be
	 * sent again and must not be taken for a duplicate then. */
	if (rpc_push_bcast(s, job)) {
		rpc_answer_event(s, to, m->conn_id, id, false, "error: the relay is overloaded, retry");
		return;
	}
	if (s->ephemeral_seen)
		recent_ids_add(s->ephemeral_seen, id);
	atomic_fetch_add(&s->stats.ephemeral_delivered, 1);
	rpc_answer_event(s, to, m->conn_id, id, true, "");
}

/* A stored event while the disk is below its reserve (diskwatch.h):
 * refused here, before it queues for a commit that would need room.
 * Ephemeral events need no disk and are still relayed. */
static void rpc_refuse_full(struct stored *s, const struct rpc_return *to,
			    const struct msg_event_store *m)
{
	diskwatch_count_refused(&s->disk, 1);
	writer_count_reject(&s->stats, DISKWATCH_MESSAGE);
	atomic_fetch_add(&s->stats.events_rejected, 1);
	rpc_answer_event(s, to, m->conn_id, m->event.id, false, DISKWATCH_MESSAGE);
}

/* For the write-policy plugin: where the event came from (plugin.h). */
static void rpc_note_source(struct write_job *job, const struct msg_str *source)
{
	memcpy(job->source_info, source->ptr, source->len); /* at most MSG_SOURCE_MAX */
	job->source_info[source->len] = '\0';
	job->source = (uint8_t)plugin_wire_source_of(job->source_info);
	job->received_at = (int64_t)time(NULL);
}

/* A stored event goes to the plugin, when one is set, else to the writer;
 * refused at once when the chosen queue is full.  Takes job. */
static void rpc_admit(struct stored *s, struct write_job *job)
{
	int rc = s->plugin ? plugin_submit(s->plugin, job) : queue_push(s->write_q, job);

	if (!rc)
		return;
	rpc_answer_event(s, &job->to, job->conn_id, job->event.id, false,
			 rc == ERR_FULL && s->plugin
				 ? "rate-limited: the relay's write policy is busy, retry"
				 : "error: the relay is overloaded, retry");
	write_job_free(job);
}

static void rpc_event_store(struct stored *s, const struct rpc_return *to, const void *body,
			    size_t len)
{
	struct msg_event_store m;
	struct write_job *job;

	if (msg_decode_event_store(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	if (event_class_of(m.event.kind) == EVENT_EPHEMERAL) {
		rpc_ephemeral(s, to, &m);
		msg_event_store_release(&m);
		return;
	}
	if (diskwatch_full(&s->disk)) {
		rpc_refuse_full(s, to, &m);
		msg_event_store_release(&m);
		return;
	}
	job = calloc(1, sizeof(*job)); /* admin, admin_index: none */
	if (!job) {
		rpc_answer_event(s, to, m.conn_id, m.event.id, false, "error: out of memory");
		msg_event_store_release(&m);
		return;
	}
	job->to = *to;
	job->conn_id = m.conn_id;
	job->event = m.event;
	rpc_note_source(job, &m.source);
	rpc_admit(s, job);
}

static void rpc_sub_open(struct stored *s, const struct rpc_return *to, const void *body, size_t len)
{
	struct msg_sub_open m;
	struct bcast_job *job;

	if (msg_decode_sub_open(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	job = rpc_bcast_job(BCAST_SUB_OPEN, to);
	if (!job) {
		msg_sub_open_release(&m);
		return;
	}
	job->conn_id = m.conn_id;
	job->sub_serial = m.sub_serial;
	job->flags = m.flags;
	job->resume_after = m.resume_after;
	memcpy(job->sub_id, m.sub_id.ptr, m.sub_id.len);
	job->sub_id_len = m.sub_id.len;
	job->filters = m.filters;
	job->nfilters = m.nfilters;
	m.filters = NULL;
	m.nfilters = 0;
	if (m.nviewers) {
		/* Without them the reader would silently miss its private events:
		 * dropped like a job without memory, its worker's wait for the
		 * answer ends in CLOSED error:. */
		job->viewers = malloc(sizeof(m.viewers[0]) * m.nviewers);
		if (!job->viewers) {
			msg_sub_open_release(&m);
			bcast_job_free(job);
			return;
		}
		memcpy(job->viewers, m.viewers, sizeof(m.viewers[0]) * m.nviewers);
		job->nviewers = m.nviewers;
	}
	msg_sub_open_release(&m);
	rpc_push_bcast(s, job);
}

static void rpc_sub_close(struct stored *s, const struct rpc_return *to, const void *body, size_t len)
{
	struct msg_sub_close m;
	struct bcast_job *job;

	if (msg_decode_sub_close(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	job = rpc_bcast_job(BCAST_SUB_CLOSE, to);
	if (!job)
		return;
	job->conn_id = m.conn_id;
	memcpy(job->sub_id, m.sub_id.ptr, m.sub_id.len);
	job->sub_id_len = m.sub_id.len;
	rpc_push_bcast(s, job);
}

static void rpc_conn_closed(struct stored *s, const struct rpc_return *to, const void *body,
			    size_t len)
{
	struct msg_conn_closed m;
	struct bcast_job *job;

	if (msg_decode_conn_closed(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	negsess_conn_closed(s, to->worker, m.conn_id);
	job = rpc_bcast_job(BCAST_CONN_CLOSED, to);
	if (!job)
		return;
	job->conn_id = m.conn_id;
	rpc_push_bcast(s, job);
}

static void rpc_worker_stats(struct stored *s, const struct rpc_return *to, const void *body,
			     size_t len)
{
	struct msg_worker_stats m;
	struct stored_worker_report *r;

	if (msg_decode_worker_stats(body, len, &m) || to->worker >= STORED_MAX_WORKERS) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	pthread_mutex_lock(&s->workers_lock);
	r = &s->workers[to->worker];
	r->pid = m.pid;
	r->started_at = m.started_at;
	r->connections = m.connections;
	r->subscriptions = m.subscriptions;
	r->messages_in = m.messages_in;
	r->messages_out = m.messages_out;
	r->events_rejected = m.events_rejected;
	r->deliver_gaps = m.deliver_gaps;
	r->rate_limited = m.rate_limited;
	r->conns_refused = m.conns_refused;
	r->lane_refused = m.lane_refused;
	r->reads_paused = m.reads_paused;
	r->requests_on_loop = m.requests_on_loop;
	r->listener_restarts = m.listener_restarts;
	r->unmasked_closed = m.unmasked_closed;
	r->store_timeouts = m.store_timeouts;
	r->too_big_closed = m.too_big_closed;
	r->pings_sent = m.pings_sent;
	r->ping_timeouts = m.ping_timeouts;
	r->ok_latency = m.ok_latency;
	r->proc = m.proc;
	pthread_mutex_unlock(&s->workers_lock);
}

/* COUNT goes straight to the query pool: it registers nothing, so its
 * bound is simply everything committed so far. */
static void rpc_count(struct stored *s, const struct rpc_return *to, const void *body, size_t len)
{
	struct msg_count m;
	struct query_job *job;
	const char *refused;

	if (msg_decode_count(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		msg_count_release(&m);
		return;
	}
	job->to = *to;
	job->conn_id = m.conn_id;
	job->count = true;
	job->max_seq = INT64_MAX;
	memcpy(job->sub_id, m.sub_id.ptr, m.sub_id.len);
	job->sub_id_len = m.sub_id.len;
	job->filters = m.filters;
	job->nfilters = m.nfilters;
	m.filters = NULL;
	if ((refused = query_submit(s, job))) {
		/* Its client must not wait for an answer that never comes. */
		reply_count_closed(s, to, job->conn_id, job->sub_id, job->sub_id_len, refused);
		query_job_free(job);
	}
	msg_count_release(&m);
}

/* Straight to a query thread: the subscription stays registered as it is,
 * and the events asked for were delivered live before, so they are
 * committed (the query thread waits until a read sees them). */
static void rpc_sub_replay(struct stored *s, const struct rpc_return *to, const void *body,
			   size_t len)
{
	struct msg_sub_replay m;
	struct query_job *job;
	const char *refused;

	if (msg_decode_sub_replay(body, len, &m) || m.before - 1 > (uint64_t)INT64_MAX) {
		msg_sub_replay_release(&m);
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		msg_sub_replay_release(&m);
		return;
	}
	job->to = *to;
	job->conn_id = m.conn_id;
	job->sub_serial = m.sub_serial;
	job->replay = true;
	job->min_seq = (int64_t)m.after;
	job->max_seq = (int64_t)(m.before - 1);
	job->filters = m.filters;
	job->nfilters = m.nfilters;
	m.filters = NULL;
	m.nfilters = 0;
	if ((refused = query_submit(s, job))) {
		reply_query_closed(s, to, job->conn_id, job->sub_serial, job->max_seq, refused);
		query_job_free(job);
	}
	atomic_fetch_add(&s->stats.replays, 1);
}

static void rpc_manage(struct stored *s, const struct rpc_return *to, const void *body, size_t len)
{
	struct msg_manage m;

	if (msg_decode_manage(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	manage_forward(s, to, &m);
}

/* A worker's answer to a question of the admin thread (workask.h); a
 * late one finds the question closed, and the reply named the worker. */
static void rpc_ask_answer(struct stored *s, const struct rpc_return *to, uint8_t type,
			   const void *body, size_t len)
{
	if (workask_answer(&s->ask, to->request_id, to->worker, type, body, len))
		log_debug("worker %u answered a closed question", to->worker);
}

static void rpc_conns_list(struct stored *s, const struct rpc_return *to, const void *body,
			   size_t len)
{
	rpc_ask_answer(s, to, MSG_CONNS_LIST, body, len);
}

static void rpc_conn_kicked(struct stored *s, const struct rpc_return *to, const void *body,
			    size_t len)
{
	rpc_ask_answer(s, to, MSG_CONN_KICKED, body, len);
}

/* NIP-77: the session thread answers (negsess.h). */
static void rpc_neg_open(struct stored *s, const struct rpc_return *to, const void *body,
			 size_t len)
{
	struct msg_neg_open m;

	if (msg_decode_neg_open(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	negsess_open(s, to, &m);
	msg_neg_open_release(&m);
}

static void rpc_neg_msg(struct stored *s, const struct rpc_return *to, const void *body,
			size_t len)
{
	struct msg_neg_msg m;

	if (msg_decode_neg_msg(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	negsess_msg(s, to, &m);
}

static void rpc_neg_close(struct stored *s, const struct rpc_return *to, const void *body,
			  size_t len)
{
	struct msg_neg_close m;

	if (msg_decode_neg_close(body, len, &m)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	negsess_close(s, to, &m);
}

typedef void (*rpc_handler)(struct stored *s, const struct rpc_return *to, const void *body,
			    size_t len);

static const rpc_handler rpc_handlers[MSG_TYPE_LIMIT] = {
	[MSG_HELLO] = rpc_hello,
	[MSG_EVENT_STORE] = rpc_event_store,
	[MSG_SUB_OPEN] = rpc_sub_open,
	[MSG_SUB_CLOSE] = rpc_sub_close,
	[MSG_CONN_CLOSED] = rpc_conn_closed,
	[MSG_WORKER_STATS] = rpc_worker_stats,
	[MSG_COUNT] = rpc_count,
	[MSG_MANAGE] = rpc_manage,
	[MSG_SUB_REPLAY] = rpc_sub_replay,
	[MSG_CONNS_LIST] = rpc_conns_list,
	[MSG_CONN_KICKED] = rpc_conn_kicked,
	[MSG_NEG_OPEN] = rpc_neg_open,
	[MSG_NEG_MSG] = rpc_neg_msg,
	[MSG_NEG_CLOSE] = rpc_neg_close,
};

/* Handles one request (header included) that arrived on pipe. */
static void rpc_dispatch_one(struct stored *s, uint32_t pipe, const uint8_t *data, size_t len)
{
	struct rpc_return to = { 0 };
	struct msg_header h;
	int err = msg_decode_header(data, len, &h);

	if (err || h.type == MSG_BUNDLE || !rpc_handlers[h.type]) {
		static atomic_bool told;

		if (err == ERR_VERSION && !atomic_exchange(&told, true))
			log_warnx("a worker speaks protocol version %u and this stored %u: its requests"
				  " are dropped; restart relay.target so that all run one build",
				  h.version, msg_version());
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	to.pipe = pipe;
	to.worker = h.worker;
	to.request_id = h.request_id;
	rpc_handlers[h.type](s, &to, data + MSG_HEADER_LEN, len - MSG_HEADER_LEN);
}

/* A request, or a bundle of them handled in order (proto/msg.h). */
static void rpc_dispatch(struct stored *s, nng_msg *msg)
{
	const uint8_t *data = nng_msg_body(msg);
	size_t len = nng_msg_len(msg);
	uint32_t pipe = nng_pipe_id(nng_msg_get_pipe(msg));
	struct msg_header h;
	struct msg_bundle b;

	if (msg_decode_header(data, len, &h) || h.type != MSG_BUNDLE) {
		rpc_dispatch_one(s, pipe, data, len);
		return;
	}
	if (msg_decode_bundle(data + MSG_HEADER_LEN, len - MSG_HEADER_LEN, &b)) {
		atomic_fetch_add(&s->stats.rpc_bad, 1);
		return;
	}
	for (uint32_t i = 0; i < b.count; i++)
		rpc_dispatch_one(s, pipe, (const uint8_t *)b.parts[i].ptr, b.parts[i].len);
	msg_bundle_release(&b);
}

void rpc_run(struct stored *s)
{
	nng_msg *msg;
	int rv;

	s->gate = gate_open(s->db_path); /* without it ephemeral events are refused */
	s->ephemeral_seen = recent_ids_new(RPC_EPHEMERAL_RECENT);
	while ((rv = nng_recvmsg(s->rpc, &msg, 0)) == 0) {
		rpc_dispatch(s, msg);
		nng_msg_free(msg);
	}
	if (rv != NNG_ECLOSED)
		log_warnx("rpc receive: %s", nng_strerror(rv));
	gate_close(s->gate);
	s->gate = NULL;
	recent_ids_free(s->ephemeral_seen);
	s->ephemeral_seen = NULL;
}

static void rpc_pipe_event(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct stored *s = arg;
	struct rpc_return to = { .pipe = nng_pipe_id(pipe) };
	struct bcast_job *job;

	if (ev != NNG_PIPE_EV_REM_POST || atomic_load(&s->stopping) || listencheck_is_own_pipe(pipe))
		return; /* a listener check's connection is no worker */
	pthread_mutex_lock(&s->workers_lock);
	for (int w = 0; w < STORED_MAX_WORKERS; w++)
		if (s->workers[w].present && s->workers[w].pipe == to.pipe)
			s->workers[w].present = false;
	pthread_mutex_unlock(&s->workers_lock);
	job = rpc_bcast_job(BCAST_PIPE_GONE, &to);
	if (job)
		rpc_push_bcast(s, job);
}

/* ipc:// goes through run_dir's file modes; tcp:// and tls+tcp:// through
 * common/peerlink.h, with the [link] TLS files. */
static int rpc_listen(struct stored *s, nng_socket sock, struct stored_listen *at)
{
	struct peerlink_tls tls;

	if (peerlink_is_ipc(at->url))
		return rundir_listen(sock, at->url, RUNDIR_WORKERS, &s->cfg, &at->listener);
	config_link_tls(&s->cfg, &tls);
	return peerlink_listen(sock, at->url, &tls, &at->listener);
}

int rpc_relisten_requests(void *arg)
{
	struct stored *s = arg;

	nng_listener_close(s->rpc_at.listener);
	return rpc_listen(s, s->rpc, &s->rpc_at);
}

int rpc_relisten_deliveries(void *arg)
{
	struct stored *s = arg;

	nng_listener_close(s->pub_at.listener);
	return rpc_listen(s, s->pub, &s->pub_at);
}

int rpc_open(struct stored *s)
{
	size_t max = rpc_max_message(s);

	if (nng_rep0_open_raw(&s->rpc) || nng_pub0_open(&s->pub))
		return ERR_NNG;
	nng_socket_set_size(s->rpc, NNG_OPT_RECVMAXSZ, max);
	nng_socket_set_int(s->rpc, NNG_OPT_RECVBUF, 1024);
	nng_socket_set_int(s->pub, NNG_OPT_SENDBUF, 1024);
	nng_pipe_notify(s->rpc, NNG_PIPE_EV_REM_POST, rpc_pipe_event, s);
	if (config_link_url(&s->cfg, CONFIG_LINK_RPC, s->rpc_at.url, sizeof(s->rpc_at.url)) ||
	    config_link_url(&s->cfg, CONFIG_LINK_PUB, s->pub_at.url, sizeof(s->pub_at.url)) ||
	    rpc_listen(s, s->rpc, &s->rpc_at) || rpc_listen(s, s->pub, &s->pub_at))
		return ERR_NNG;
	return 0;
}
