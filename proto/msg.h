/*
 * msg.h - every message relayd and stored exchange, defined once.
 *
 * Channels (socket paths are in the README; the [link] config keys put
 * each on tcp:// or tls+tcp:// instead, common/peerlink.h, with the reply
 * channel then dialled by the worker and carrying its DELIVERs too,
 * stored/reply.h and stored/pub.h):
 *   stored-rpc.ipc  relayd (raw REQ, dials) -> stored (raw REP, listens).
 *                   Requests: HELLO, EVENT_STORE, SUB_OPEN, SUB_CLOSE,
 *                   CONN_CLOSED, WORKER_STATS, COUNT, MANAGE, SUB_REPLAY,
 *                   CONNS_LIST, CONN_KICKED (answers to stored's questions,
 *                   echoing their request id), NEG_OPEN, NEG_MSG, NEG_CLOSE
 *                   (NIP-77), and BUNDLE (several
 *                   of these in one message).  One worker's requests travel in order on one pipe, so a
 *                   connection's REQ, CLOSE and disconnect stay ordered.
 *   relayd-<worker>-<boot id>.ipc (msg_reply_socket_name())
 *                   stored (PUSH, dials once the worker's HELLO names its
 *                   boot id) -> relayd (PULL, listens).  Replies: HELLO_ACK,
 *                   EVENT_RESULT, EVENT_RESULTS (a commit's), QUERY_EVENTS (zero or more) then
 *                   QUERY_LAST (or QUERY_DONE when the query failed),
 *                   COUNT_RESULT, MANAGE_RESULT, NEG_REPLY, and stored's own
 *                   questions CONNS_ASK and CONN_KICK.  Not the REP socket: raw
 *                   REP drops a reply whenever the pipe's two-message queue
 *                   is full (a commit answers hundreds at once), while PUSH
 *                   waits.  The boot id in the name keeps replies meant for
 *                   a worker that died from reaching its successor.
 *   stored-pub.ipc  stored (PUB) -> relayd (SUB): DELIVER, one message per
 *                   worker per event; the first 4 bytes (version, type,
 *                   worker) are the subscription topic (msg_topic()).
 *                   METRICS and POLICY go to all workers (worker
 *                   MSG_WORKER_ALL).  PUB drops when a
 *                   worker is slow, so DELIVER carries a per-worker sequence
 *                   number, counted from 1 after each HELLO, and workers
 *                   count gaps (relayd/gapcount.h).
 *
 * Every message starts with the 8-byte header below.  Numbers in this enum
 * are never reused.  Decoders consume the body exactly and reject truncated
 * bodies (ERR_TRUNC), trailing bytes (ERR_TRAILING) and unknown versions
 * (ERR_VERSION).
 *
 * Ownership: decoded strings and byte arrays are *views* into the received
 * payload, valid while it lives, except where a field says "owned".
 */
#ifndef PROTO_MSG_H
#define PROTO_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/event.h"
#include "../common/filter.h"
#include "../common/histo.h"
#include "../common/procstat.h"

/* The version every header carries.  It goes up whenever a message's
 * layout changes; git says what each version added. */
#define PROTO_VERSION 5
/* Most pubkeys one SUB_OPEN names as readers of private kinds (a
 * connection authenticates at most 8, relayd/auth.h). */
#define MSG_VIEWERS_MAX 8
#define MSG_HEADER_LEN 8
/* Longest subscription id in bytes: NIP-01 allows 64 characters, and a
 * UTF-8 character takes up to 4 bytes. */
#define MSG_SUB_ID_MAX 256
/* Bytes of a DELIVER message that select its worker (version, type, worker). */
#define MSG_TOPIC_LEN 4

/* The reply socket's file name for a worker incarnation (see above), into
 * out (at least MSG_REPLY_SOCKET_NAME_MAX bytes). */
#define MSG_REPLY_SOCKET_NAME_MAX 48
void msg_reply_socket_name(char *out, uint16_t worker, uint64_t boot_id);

enum msg_type {
	MSG_HELLO = 1,
	MSG_HELLO_ACK = 2,
	MSG_EVENT_STORE = 3,
	MSG_EVENT_RESULT = 4,
	MSG_SUB_OPEN = 5,
	MSG_QUERY_EVENTS = 6,
	MSG_QUERY_DONE = 7,
	MSG_SUB_CLOSE = 8,
	MSG_CONN_CLOSED = 9,
	MSG_DELIVER = 10,
	MSG_WORKER_STATS = 11,
	MSG_COUNT = 12,
	MSG_COUNT_RESULT = 13,
	MSG_METRICS = 14,
	MSG_MANAGE = 15,
	MSG_MANAGE_RESULT = 16,
	MSG_POLICY = 17,
	MSG_EVENT_RESULTS = 18,
	MSG_BUNDLE = 19,
	MSG_QUERY_LAST = 20,
	MSG_SUB_REPLAY = 21,
	MSG_CONNS_ASK = 22,
	MSG_CONNS_LIST = 23,
	MSG_CONN_KICK = 24,
	MSG_CONN_KICKED = 25,
	MSG_NEG_OPEN = 26,
	MSG_NEG_MSG = 27,
	MSG_NEG_CLOSE = 28,
	MSG_NEG_REPLY = 29,
	MSG_TYPE_LIMIT /* one past the largest; not a type */
};

/* Name of a type for logs ("event_store"); "unknown" for others. */
const char *msg_type_name(int type);

struct msg_header {
	uint8_t version;     /* PROTO_VERSION */
	uint8_t type;        /* enum msg_type */
	uint16_t worker;     /* the relayd instance the message is from or for */
	uint32_t request_id; /* echoes the request in replies; in DELIVER, the
			      * worker's latest HELLO that stored took */
};

/* The header of a message for an encoder: worker and request_id, with the
 * version this build speaks.  The type stays 0: each encoder writes its own
 * type (and the version) whatever the header says. */
struct msg_header msg_header_for(uint16_t worker, uint32_t request_id);

/* The protocol version this build speaks, for logs. */
unsigned msg_version(void);

/* The worker field of a message published to every worker (METRICS, POLICY). */
#define MSG_WORKER_ALL 0xffff

/* Writes into out the SUB topic that selects published messages of type
 * for worker (MSG_WORKER_ALL: the broadcasts).  These are the first
 * MSG_TOPIC_LEN bytes an encoder writes for that type and worker, so a
 * relayd subscribes with exactly what stored's PUB sends. */
void msg_topic(uint8_t out[MSG_TOPIC_LEN], enum msg_type type, uint16_t worker);

/* A string view: len bytes at ptr, not NUL-terminated. */
struct msg_str {
	const char *ptr;
	uint32_t len;
};

/* HELLO: a worker introduces itself after (re)connecting.  boot_id changes
 * every time the worker process starts, so stored can tell a restart (drop
 * the old subscriptions) from a reconnect. */
struct msg_hello {
	uint32_t pid;
	uint64_t boot_id;
};

/* HELLO_ACK: stored's answer; boot_id changes every time stored starts, so a
 * worker knows to re-register its live subscriptions. */
struct msg_hello_ack {
	uint64_t boot_id;
};

/* EVENT_STORE: a validated event (signature already checked). */
struct msg_event_store {
	uint64_t conn_id;
	struct event event; /* owned after decoding: event_free() it */
	/* The client's address as text (relayd/realip.h), at most
	 * MSG_SOURCE_MAX bytes; empty when the worker does not send it (no
	 * write-policy plugin). */
	struct msg_str source;
};
#define MSG_SOURCE_MAX 63

/* EVENT_RESULT: the NIP-01 OK for one event. */
struct msg_event_result {
	uint64_t conn_id;
	uint8_t id[EVENT_ID_LEN];
	bool accepted;
	struct msg_str message; /* "" or "prefix: reason" */
};

/* EVENT_RESULTS: every result of one commit for one worker, in one
 * message (header request_id 0); each item names its own request.  A
 * commit's hundreds of results then cost one hand-off (bench/RESULTS.md,
 * item 4). */
struct msg_event_results_item {
	uint32_t request_id;
	struct msg_event_result result;
};
struct msg_event_results {
	uint32_t count;
	struct msg_event_results_item *items; /* decoded: owned array of views,
						  msg_event_results_release() */
};

/* BUNDLE: several complete requests (each with its own header) in one
 * message, handled in order as if each had come alone.  An ingress lane
 * bundles the EVENT_STOREs it verifies back to back: one hand-off through
 * nng instead of one per event.  A bundle never contains a bundle. */
#define MSG_BUNDLE_MAX 64
struct msg_bundle {
	uint32_t count;
	struct msg_str *parts; /* decoded: owned array of views, msg_bundle_release() */
};

enum msg_sub_flags {
	MSG_SUB_HISTORY = 1, /* also query stored events, then QUERY_DONE */
	MSG_SUB_RESUME = 2,  /* re-registering a live subscription: replay the
				matching events committed after resume_after (no
				limit beyond the relay's), then QUERY_DONE */
};

/* SUB_OPEN: open or replace subscription sub_id (1..MSG_SUB_ID_MAX bytes) on a connection. */
struct msg_sub_open {
	uint64_t conn_id;
	uint32_t sub_serial; /* the worker's number for this subscription; deliveries carry it */
	struct msg_str sub_id;
	uint8_t flags;       /* enum msg_sub_flags; HISTORY and RESUME exclude each other */
	uint64_t resume_after; /* with MSG_SUB_RESUME: the last commit seq already
				  delivered; 0 otherwise */
	uint32_t nfilters;
	struct filter *filters; /* owned after decoding: msg_sub_open_release() */
	/* private_kinds: the pubkeys the connection had authenticated; stored
	 * selects private events only of theirs or naming them in a p tag,
	 * before the limit (relayd/private.h) */
	uint32_t nviewers;
	uint8_t viewers[MSG_VIEWERS_MAX][32];
};

/* SUB_REPLAY: a live subscription lost deliveries (relayd/gapcount.h):
 * send it again the stored events matching filters with a commit seq in
 * (after, before), no limit beyond the relay's, as QUERY_EVENTS and then
 * QUERY_DONE or QUERY_LAST with this request's id.  The subscription's
 * registration is left as it is. */
struct msg_sub_replay {
	uint64_t conn_id;
	uint32_t sub_serial;
	uint64_t after;
	uint64_t before;
	uint32_t nfilters;
	struct filter *filters; /* owned after decoding: msg_sub_replay_release() */
};

/* QUERY_EVENTS: a chunk of stored events for a subscription, in order. */
struct msg_query_events {
	uint64_t conn_id;
	uint32_t sub_serial;
	uint32_t count;
	struct msg_str *events; /* owned array of views: msg_query_events_release() */
};

enum msg_query_status {
	MSG_QUERY_EOSE = 0,   /* stored events done; live delivery follows */
	MSG_QUERY_CLOSED = 1, /* refused or failed; message says why */
};

/* QUERY_DONE: the end of a subscription's stored events. */
struct msg_query_done {
	uint64_t conn_id;
	uint32_t sub_serial;
	uint8_t status; /* enum msg_query_status */
	uint64_t max_seq; /* the commit seq the subscription was registered at:
			     later events arrive live */
	struct msg_str message;
};

/* QUERY_LAST: the last chunk of a subscription's stored events (it may be
 * empty) together with its EOSE: what QUERY_EVENTS then QUERY_DONE (status
 * EOSE) would say, in one hand-off, which is all most REQs need.  A query
 * that fails still ends with QUERY_DONE (CLOSED). */
struct msg_query_last {
	struct msg_query_events events;
	uint64_t max_seq; /* as in QUERY_DONE */
};

/* SUB_CLOSE: the client sent CLOSE. */
struct msg_sub_close {
	uint64_t conn_id;
	struct msg_str sub_id;
};

/* CONN_CLOSED: the connection is gone; drop all its subscriptions. */
struct msg_conn_closed {
	uint64_t conn_id;
};

struct msg_target {
	uint64_t conn_id;
	uint32_t sub_serial;
};

/* DELIVER: one live event for one worker's matching subscriptions. */
struct msg_deliver {
	uint64_t seq; /* per worker, 1, 2, ... from its latest HELLO; a jump is a gap */
	uint64_t commit_seq; /* the event's commit order in the database; 0 if ephemeral */
	struct msg_str event_json;
	uint32_t ntargets;
	struct msg_target *targets; /* owned array: msg_deliver_release() */
	int64_t expiration; /* NIP-40 unix seconds, 0: none; a worker holding the
			       delivery past it drops it */
};

/* WORKER_STATS: a worker's counters, sent periodically. */
struct msg_worker_stats {
	uint32_t pid;
	uint64_t started_at; /* unix seconds */
	uint32_t connections;
	uint32_t subscriptions;
	uint64_t messages_in;
	uint64_t messages_out;
	uint64_t events_rejected;
	uint64_t deliver_gaps;
	uint64_t rate_limited;
	uint64_t conns_refused;
	uint64_t lane_refused; /* messages a full ingress lane refused */
	uint64_t reads_paused; /* times a connection's reads paused (max_queued_messages) */
	uint64_t requests_on_loop; /* REQ/CLOSE/COUNT parsed on the websocket loop itself */
	uint64_t listener_restarts; /* its reply socket listened on again (listencheck.h) */
	uint64_t unmasked_closed; /* connections closed for an unmasked frame (wsguard.h) */
	uint64_t store_timeouts; /* EVENTs, REQs and COUNTs stored did not answer in time */
	uint64_t too_big_closed; /* connections closed with 1009: a message over max_message_bytes */
	uint64_t pings_sent;     /* keepalive pings written to idle connections */
	uint64_t ping_timeouts;  /* connections closed for not answering a ping */
	struct histo ok_latency; /* EVENT received -> OK sent, for stored's answers */
	struct procstat proc;    /* its process_* figures (common/procstat.h) */
};

/* METRICS: stored's relay-wide snapshot, published to every worker about
 * once a second (worker MSG_WORKER_ALL). */
struct msg_metrics {
	struct msg_str prometheus; /* text exposition format */
	struct msg_str summary;    /* a small JSON object for the status page */
};

/* COUNT: a NIP-45 count over filters (OR'ed). */
struct msg_count {
	uint64_t conn_id;
	struct msg_str sub_id;
	uint32_t nfilters;
	struct filter *filters; /* owned after decoding: msg_count_release() */
};

#define MSG_HLL_REGISTERS 256

/* COUNT_RESULT: the answer, or a refusal (status MSG_QUERY_CLOSED). */
struct msg_count_result {
	uint64_t conn_id;
	struct msg_str sub_id;
	uint8_t status;       /* enum msg_query_status: EOSE means counted */
	uint64_t count;
	bool has_hll;
	uint8_t hll[MSG_HLL_REGISTERS];
	struct msg_str message; /* why, when refused */
};

/* MANAGE: a NIP-86 JSON-RPC request from an admin whose NIP-98
 * authorization the worker has checked. */
struct msg_manage {
	uint8_t pubkey[EVENT_PUBKEY_LEN]; /* the authorized admin */
	struct msg_str request;           /* {"method": ..., "params": [...]} */
};

/* MANAGE_RESULT: the JSON-RPC response object ({"result": ...} or
 * {"error": ...}) for the request with the same request_id. */
struct msg_manage_result {
	struct msg_str response;
};

#define MSG_POLICY_MAX_IPS 4096

/* POLICY: what the workers must enforce or show from NIP-86 state,
 * published to all workers (MSG_WORKER_ALL) with METRICS.  Empty texts mean
 * "as configured". */
struct msg_policy {
	struct msg_str relay_name;
	struct msg_str relay_description;
	struct msg_str relay_icon;
	uint32_t nblocked;
	struct msg_str *blocked_ips; /* owned array of views: msg_policy_release() */
	uint8_t writes_restricted; /* 1: an allow list of pubkeys or kinds is in force */
};

/* ---- relayctl conns and kick: stored asks, each worker answers ----
 * stored sends CONNS_ASK or CONN_KICK on a worker's reply channel with a
 * request id of its own; the worker answers with CONNS_LIST or
 * CONN_KICKED on stored-rpc.ipc, echoing that id. */

/* CONNS_ASK: list at most max of your open connections. */
struct msg_conns_ask {
	uint32_t max;
};

/* Longest client address text (relayd/conn.h keeps 64 bytes with the NUL). */
#define MSG_CONN_ADDRESS_MAX 63
/* A worker's CONNS_LIST stays under this many bytes, below stored's 1 MiB
 * receive bound: past it the worker lists fewer connections. */
#define MSG_CONNS_LIST_BYTES (960u << 10)

/* One open connection of a worker. */
struct msg_conn_info {
	uint64_t conn_id;
	struct msg_str address;  /* the client's (relayd/realip.h), at most MSG_CONN_ADDRESS_MAX bytes */
	uint64_t since;          /* unix seconds when it opened */
	uint64_t messages_in;    /* websocket messages it sent */
	uint64_t messages_out;   /* frames written to it */
	uint32_t subscriptions;  /* open REQs */
	uint32_t npubkeys;       /* NIP-42 pubkeys it authenticated, 0..MSG_VIEWERS_MAX */
	const uint8_t *pubkeys;  /* npubkeys * 32 bytes (decoded: a view, NULL for none) */
};

/* CONNS_LIST: the answer to CONNS_ASK.  total counts every open
 * connection; count of them are listed (fewer when the ask's max or
 * MSG_CONNS_LIST_BYTES cut the list). */
struct msg_conns_list {
	uint32_t total;
	uint32_t count;
	struct msg_conn_info *conns; /* decoded: owned array of views, msg_conns_list_release() */
};

/* The bytes one connection adds to a CONNS_LIST body. */
size_t msg_conn_info_len(const struct msg_conn_info *c);

/* Longest reason of a websocket Close frame (RFC 6455 5.5: 125 bytes of
 * payload, 2 of them the code). */
#define MSG_CLOSE_REASON_MAX 123

/* CONN_KICK: close conn_id with a websocket Close of code (1000..4999)
 * and reason (0..MSG_CLOSE_REASON_MAX bytes). */
struct msg_conn_kick {
	uint64_t conn_id;
	uint16_t code;
	struct msg_str reason;
};

/* CONN_KICKED: the answer to CONN_KICK; found is false when the worker
 * has no open connection conn_id. */
struct msg_conn_kicked {
	uint64_t conn_id;
	bool found;
};

/*
 * Encoders append the header and body to out (which they do not reset).
 * They take only h->worker and h->request_id (msg_header_for() builds h).
 * Each returns 0, or ERR_NOMEM/ERR_TOOBIG with out as it was before.
 */
int msg_encode_hello(struct buf *out, const struct msg_header *h, const struct msg_hello *m);
int msg_encode_hello_ack(struct buf *out, const struct msg_header *h, const struct msg_hello_ack *m);
int msg_encode_event_store(struct buf *out, const struct msg_header *h,
			   const struct msg_event_store *m);
int msg_encode_event_result(struct buf *out, const struct msg_header *h,
			    const struct msg_event_result *m);
int msg_encode_event_results(struct buf *out, const struct msg_header *h,
			     const struct msg_event_results *m);
int msg_encode_bundle(struct buf *out, const struct msg_header *h, const struct msg_bundle *m);
int msg_encode_sub_open(struct buf *out, const struct msg_header *h, const struct msg_sub_open *m);
int msg_encode_sub_replay(struct buf *out, const struct msg_header *h,
			  const struct msg_sub_replay *m);
int msg_encode_query_events(struct buf *out, const struct msg_header *h,
			    const struct msg_query_events *m);
int msg_encode_query_done(struct buf *out, const struct msg_header *h,
			  const struct msg_query_done *m);
int msg_encode_query_last(struct buf *out, const struct msg_header *h,
			  const struct msg_query_last *m);
int msg_encode_sub_close(struct buf *out, const struct msg_header *h, const struct msg_sub_close *m);
int msg_encode_conn_closed(struct buf *out, const struct msg_header *h,
			   const struct msg_conn_closed *m);
int msg_encode_deliver(struct buf *out, const struct msg_header *h, const struct msg_deliver *m);
int msg_encode_worker_stats(struct buf *out, const struct msg_header *h,
			    const struct msg_worker_stats *m);
int msg_encode_count(struct buf *out, const struct msg_header *h, const struct msg_count *m);
int msg_encode_metrics(struct buf *out, const struct msg_header *h, const struct msg_metrics *m);
int msg_encode_policy(struct buf *out, const struct msg_header *h, const struct msg_policy *m);
int msg_encode_manage(struct buf *out, const struct msg_header *h, const struct msg_manage *m);
int msg_encode_manage_result(struct buf *out, const struct msg_header *h,
			     const struct msg_manage_result *m);
int msg_encode_count_result(struct buf *out, const struct msg_header *h,
			    const struct msg_count_result *m);
int msg_encode_conns_ask(struct buf *out, const struct msg_header *h,
			 const struct msg_conns_ask *m);
int msg_encode_conns_list(struct buf *out, const struct msg_header *h,
			  const struct msg_conns_list *m);
int msg_encode_conn_kick(struct buf *out, const struct msg_header *h,
			 const struct msg_conn_kick *m);
int msg_encode_conn_kicked(struct buf *out, const struct msg_header *h,
			   const struct msg_conn_kicked *m);

/*
 * Reads the header from the first MSG_HEADER_LEN bytes of data.
 * Returns 0, ERR_TRUNC (short), ERR_VERSION (other version) or ERR_TYPE
 * (type outside the enum).  The body starts at data + MSG_HEADER_LEN.
 */
int msg_decode_header(const void *data, size_t len, struct msg_header *h);

/*
 * Body decoders: body/len is everything after the header.  Return 0, or
 * ERR_TRUNC / ERR_TRAILING / ERR_INVAL / ERR_TOOBIG / ERR_NOMEM with nothing
 * left to release.
 */
int msg_decode_hello(const void *body, size_t len, struct msg_hello *m);
int msg_decode_hello_ack(const void *body, size_t len, struct msg_hello_ack *m);
int msg_decode_event_store(const void *body, size_t len, struct msg_event_store *m);
int msg_decode_event_result(const void *body, size_t len, struct msg_event_result *m);
int msg_decode_event_results(const void *body, size_t len, struct msg_event_results *m);
int msg_decode_bundle(const void *body, size_t len, struct msg_bundle *m);
int msg_decode_sub_open(const void *body, size_t len, struct msg_sub_open *m);
int msg_decode_sub_replay(const void *body, size_t len, struct msg_sub_replay *m);
int msg_decode_query_events(const void *body, size_t len, struct msg_query_events *m);
int msg_decode_query_done(const void *body, size_t len, struct msg_query_done *m);
int msg_decode_query_last(const void *body, size_t len, struct msg_query_last *m);
int msg_decode_sub_close(const void *body, size_t len, struct msg_sub_close *m);
int msg_decode_conn_closed(const void *body, size_t len, struct msg_conn_closed *m);
int msg_decode_deliver(const void *body, size_t len, struct msg_deliver *m);
int msg_decode_worker_stats(const void *body, size_t len, struct msg_worker_stats *m);
int msg_decode_count(const void *body, size_t len, struct msg_count *m);
int msg_decode_metrics(const void *body, size_t len, struct msg_metrics *m);
int msg_decode_policy(const void *body, size_t len, struct msg_policy *m);
int msg_decode_manage(const void *body, size_t len, struct msg_manage *m);
int msg_decode_manage_result(const void *body, size_t len, struct msg_manage_result *m);
int msg_decode_count_result(const void *body, size_t len, struct msg_count_result *m);
int msg_decode_conns_ask(const void *body, size_t len, struct msg_conns_ask *m);
int msg_decode_conns_list(const void *body, size_t len, struct msg_conns_list *m);
int msg_decode_conn_kick(const void *body, size_t len, struct msg_conn_kick *m);
int msg_decode_conn_kicked(const void *body, size_t len, struct msg_conn_kicked *m);

/* Release what a successful decode owns.  NULL-safe and idempotent. */
void msg_event_store_release(struct msg_event_store *m);
void msg_sub_open_release(struct msg_sub_open *m);
void msg_sub_replay_release(struct msg_sub_replay *m);
void msg_query_events_release(struct msg_query_events *m);
void msg_query_last_release(struct msg_query_last *m);
void msg_event_results_release(struct msg_event_results *m);
void msg_bundle_release(struct msg_bundle *m);
void msg_deliver_release(struct msg_deliver *m);
void msg_count_release(struct msg_count *m);
void msg_policy_release(struct msg_policy *m);
void msg_conns_list_release(struct msg_conns_list *m);

/* ---- NIP-77 negentropy: stored keeps each session (stored/negsess.h) ----
 * A session is named (worker, conn_id, sub_id).  Each NEG_OPEN, NEG_MSG
 * gets exactly one NEG_REPLY; NEG_CLOSE gets none. */

/* Longest negentropy message either way, in bytes (hex is twice that):
 * above every frame limit the config allows. */
#define MSG_NEG_BYTES_MAX (1u << 20)

/* NEG_OPEN: open (or replace) session sub_id over the events matching
 * filter as a REQ of this connection would see them, and answer its first
 * message. */
struct msg_neg_open {
	uint64_t conn_id;
	struct msg_str sub_id;
	struct filter filter;   /* owned after decoding: msg_neg_open_release() */
	uint32_t nviewers;      /* the connection's NIP-42 pubkeys (private kinds) */
	uint8_t viewers[MSG_VIEWERS_MAX][32];
	struct msg_str message; /* binary, 1..MSG_NEG_BYTES_MAX bytes */
};

/* NEG_MSG: the client's next message for session sub_id. */
struct msg_neg_msg {
	uint64_t conn_id;
	struct msg_str sub_id;
	struct msg_str message; /* binary, 1..MSG_NEG_BYTES_MAX bytes */
};

/* NEG_CLOSE: the client closed session sub_id. */
struct msg_neg_close {
	uint64_t conn_id;
	struct msg_str sub_id;
};

enum msg_neg_status {
	MSG_NEG_MESSAGE = 0, /* payload: the relay's binary message (NEG-MSG) */
	MSG_NEG_ERROR = 1,   /* payload: "prefix: reason" (NEG-ERR); the session is gone */
};

/* NEG_REPLY: stored's answer to one NEG_OPEN or NEG_MSG. */
struct msg_neg_reply {
	uint64_t conn_id;
	struct msg_str sub_id;
	uint8_t status;         /* enum msg_neg_status */
	struct msg_str payload; /* at most MSG_NEG_BYTES_MAX bytes */
};

int msg_encode_neg_open(struct buf *out, const struct msg_header *h, const struct msg_neg_open *m);
int msg_encode_neg_msg(struct buf *out, const struct msg_header *h, const struct msg_neg_msg *m);
int msg_encode_neg_close(struct buf *out, const struct msg_header *h,
			 const struct msg_neg_close *m);
int msg_encode_neg_reply(struct buf *out, const struct msg_header *h,
			 const struct msg_neg_reply *m);
/* Decoders as above; a NEG_OPEN holds exactly one filter. */
int msg_decode_neg_open(const void *body, size_t len, struct msg_neg_open *m);
int msg_decode_neg_msg(const void *body, size_t len, struct msg_neg_msg *m);
int msg_decode_neg_close(const void *body, size_t len, struct msg_neg_close *m);
int msg_decode_neg_reply(const void *body, size_t len, struct msg_neg_reply *m);
void msg_neg_open_release(struct msg_neg_open *m);

#endif
