/* answer.c - stored's replies and deliveries to client frames (see answer.h). */
#include "answer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "conn.h"
#include "connlist.h"
#include "link.h"
#include "nip86.h"
#include "nip11.h"
#include "outq.h"
#include "policy.h"
#include "private.h"
#include "relayd.h"
#include "replay.h"
#include "reply.h"
#include "send.h"
#include "subreg.h"

/* The OK for one pending EVENT of a connection. */
static void answer_one_result(struct relayd *r, uint32_t request_id,
			      const struct msg_event_result *m)
{
	struct pending_event p;
	struct conn *c;
	char text[256];
	size_t n;
	char *frame;

	c = conn_find(r->conns, m->conn_id);
	if (!c || conn_pending_take(c, request_id, &p)) {
		atomic_fetch_add(&r->stats.stale_replies, 1);
		return;
	}
	histo_observe(&r->ok_latency, (uint64_t)(deadline_now_us() - p.started_us));
	snprintf(text, sizeof(text), "%.*s", (int)m->message.len, m->message.ptr);
	frame = reply_ok(m->id, m->accepted, text, &n);
	if (frame)
		send_frame(r, c, frame, n, NULL, '\0');
}

static void answer_event_result(struct relayd *r, const struct msg_header *h, const void *body,
				size_t len)
{
	struct msg_event_result m;

	if (msg_decode_event_result(body, len, &m) == 0)
		answer_one_result(r, h->request_id, &m);
}

static void answer_event_results(struct relayd *r, const void *body, size_t len)
{
	struct msg_event_results m;

	if (msg_decode_event_results(body, len, &m))
		return;
	for (uint32_t i = 0; i < m.count; i++)
		answer_one_result(r, m.items[i].request_id, &m.items[i].result);
	msg_event_results_release(&m);
}

/* The subscription a QUERY_* reply is for: one waiting for its history (or
 * resume), or a live one the reply sends lost deliveries again (*replay,
 * replay.h); NULL (counted stale) if neither. */
static struct sub *answer_reply_sub(struct relayd *r, uint32_t request_id, uint64_t conn_id,
				    uint32_t serial, struct conn **c, bool *replay)
{
	struct sub *s;

	*c = conn_find(r->conns, conn_id);
	s = *c ? conn_sub_find_serial(*c, serial) : NULL;
	*replay = replay_is_id(request_id);
	if (!s || (s->state == SUB_LIVE) != *replay) {
		atomic_fetch_add(&r->stats.stale_replies, 1);
		return NULL;
	}
	return s;
}

/* Sends a chunk of stored events to a subscription waiting for them; stops
 * at the first one the connection cannot take (it is closing then).  Skips
 * those it was sent before a stored restart made it ask again, and notes
 * the others until it has everything it asked for (sentids.h). */
static void answer_stored_events(struct relayd *r, struct conn *c, struct sub *s,
				 const struct msg_query_events *m)
{
	for (uint32_t i = 0; i < m->count; i++) {
		size_t n;
		char *frame;
		uint64_t key;
		bool keyed = sent_ids_key(m->events[i].ptr, m->events[i].len, &key);

		if (keyed && sent_ids_has(&s->sent, key))
			continue;
		if (s->restricted && !private_visible(relayd_cfg(r), m->events[i].ptr,
						      m->events[i].len, (const uint8_t(*)[32])s->viewers,
						      s->nviewers))
			continue;
		frame = reply_event(s->id, s->id_len, m->events[i].ptr, m->events[i].len, &n);
		if (!frame || send_frame(r, c, frame, n, NULL, '\0'))
			return;
		if (keyed && !sent_ids_add(&s->sent, key) && replay_sent_full(r))
			log_warnx("a subscription was sent %d stored events while its answer was"
				  " unfinished; past that, some may come twice if stored restarts"
				  " (logged once)", SENT_IDS_MAX);
	}
}

/* Live with nothing more asked of stored: no answer can be asked again, so
 * the ids noted for one go. */
static void answer_settle(struct sub *s)
{
	if (s->state == SUB_LIVE && s->lost.n == 0)
		sent_ids_clear(&s->sent);
}

static void answer_query_events(struct relayd *r, const struct msg_header *h, const void *body,
				size_t len)
{
	struct msg_query_events m;
	struct conn *c;
	struct sub *s;
	bool replay;

	if (msg_decode_query_events(body, len, &m))
		return;
	s = answer_reply_sub(r, h->request_id, m.conn_id, m.sub_serial, &c, &replay);
	if (s && !replay)
		subreg_answer_due(r, s); /* a long history is still coming */
	if (s)
		answer_stored_events(r, c, s, &m);
	msg_query_events_release(&m);
}

/* History (or a resume's replay) is complete: EOSE if the client waits for
 * one, then whatever arrived live meanwhile, then live delivery. */
static void answer_go_live(struct relayd *r, struct conn *c, struct sub *s, uint64_t max_seq)
{
	/* A history brings every commit up to max_seq, a resume those after
	 * the point it resumed from. */
	uint64_t covered_after = s->state == SUB_QUERYING ? 0 : s->resume_after;
	size_t n;
	char *frame;

	if (s->state == SUB_QUERYING) {
		frame = reply_eose(s->id, s->id_len, &n);
		if (!frame || send_frame(r, c, frame, n, NULL, '\0'))
			return;
	}
	s->state = SUB_LIVE;
	s->floor_seq = max_seq;
	/* Held while the history came (up to seconds): NIP-40 says an event is
	 * not delivered from the second it expires. */
	outq_drop_expired(&s->held, (int64_t)time(NULL));
	replay_went_live(r, c, s, covered_after, max_seq);
	if (c->closing) {
		outq_clear(&s->held); /* nothing goes out after a Close */
		return;
	}
	outq_splice(&c->out, &s->held);
	if (c->out.first)
		lws_callback_on_writable(c->wsi);
}

/* The last chunk and the EOSE in one message: the same as QUERY_EVENTS then
 * QUERY_DONE (EOSE). */
static void answer_query_last(struct relayd *r, const struct msg_header *h, const void *body,
			      size_t len)
{
	struct msg_query_last m;
	struct conn *c;
	struct sub *s;
	bool replay;

	if (msg_decode_query_last(body, len, &m))
		return;
	s = answer_reply_sub(r, h->request_id, m.events.conn_id, m.events.sub_serial, &c, &replay);
	if (s)
		answer_stored_events(r, c, s, &m.events);
	if (replay)
		replay_answered(r, s, h->request_id);
	else if (s)
		answer_go_live(r, c, s, m.max_seq);
	if (s)
		answer_settle(s);
	msg_query_last_release(&m);
}

static void answer_query_done(struct relayd *r, const struct msg_header *h, const void *body,
			      size_t len)
{
	struct msg_query_done m;
	struct conn *c;
	struct sub *s;
	size_t n;
	char *frame, why[256];
	bool replay;

	if (msg_decode_query_done(body, len, &m))
		return;
	s = answer_reply_sub(r, h->request_id, m.conn_id, m.sub_serial, &c, &replay);
	if (replay)
		replay_answered(r, s, h->request_id);
	if (!s)
		return;
	if (replay) {
		answer_settle(s);
		/* A replay that failed leaves the subscription live: its loss
		 * stays as counted, and nothing the client asked for is closed. */
		if (m.status != MSG_QUERY_EOSE)
			log_debug("a replay of lost deliveries failed: %.*s", (int)m.message.len,
				  m.message.ptr);
		return;
	}
	if (m.status == MSG_QUERY_EOSE) {
		answer_go_live(r, c, s, m.max_seq);
		answer_settle(s);
		return;
	}
	snprintf(why, sizeof(why), "%.*s", (int)m.message.len, m.message.ptr);
	frame = reply_closed(s->id, s->id_len, why, &n);
	if (frame)
		send_frame(r, c, frame, n, NULL, '\0');
	/* stored filed it before its history failed: unfiled, it would be
	 * matched against every event for as long as the connection lives. */
	subreg_close(r, c, s);
	conn_sub_remove(c, s);
}

static void answer_count_result(struct relayd *r, const struct msg_header *h, const void *body,
				size_t len)
{
	struct msg_count_result m;
	struct conn *c;
	char why[256];
	char *frame;
	size_t n;

	if (msg_decode_count_result(body, len, &m))
		return;
	c = conn_find(r->conns, m.conn_id);
	/* Not noted: closed already when the link went down (countwait.h). */
	if (!c || !count_waits_take(&c->counts, h->request_id, NULL)) {
		atomic_fetch_add(&r->stats.stale_replies, 1);
		return;
	}
	if (m.status == MSG_QUERY_EOSE) {
		frame = reply_count(m.sub_id.ptr, m.sub_id.len, m.count, m.has_hll ? m.hll : NULL, &n);
	} else {
		snprintf(why, sizeof(why), "%.*s", (int)m.message.len, m.message.ptr);
		frame = reply_closed(m.sub_id.ptr, m.sub_id.len, why, &n);
	}
	if (frame)
		send_frame(r, c, frame, n, NULL, '\0');
}

/* NIP-77: stored's answer for a negentropy session, as NEG-MSG (hex) or
 * NEG-ERR. */
static void answer_neg_reply(struct relayd *r, const void *body, size_t len)
{
	struct msg_neg_reply m;
	struct conn *c;
	char why[256];
	char *frame;
	size_t n;

	if (msg_decode_neg_reply(body, len, &m))
		return;
	c = conn_find(r->conns, m.conn_id);
	if (!c) {
		atomic_fetch_add(&r->stats.stale_replies, 1);
		return;
	}
	if (m.status == MSG_NEG_MESSAGE) {
		frame = reply_neg_msg(m.sub_id.ptr, m.sub_id.len, (const uint8_t *)m.payload.ptr,
				      m.payload.len, &n);
	} else {
		snprintf(why, sizeof(why), "%.*s", (int)m.payload.len, m.payload.ptr);
		frame = reply_neg_err(m.sub_id.ptr, m.sub_id.len, why, &n);
	}
	if (frame)
		send_frame(r, c, frame, n, NULL, '\0');
}

static void answer_manage_result(struct relayd *r, const struct msg_header *h, const void *body,
				 size_t len)
{
	struct msg_manage_result m;

	if (msg_decode_manage_result(body, len, &m) == 0)
		nip86_on_result(r, h->request_id, m.response.ptr, m.response.len);
}

static void answer_hello_ack(struct relayd *r, const void *body, size_t len)
{
	struct msg_hello_ack m;

	if (msg_decode_hello_ack(body, len, &m) == 0) {
		link_hello_acked(r);
		log_debug("stored acknowledged hello (boot %016llx)", (unsigned long long)m.boot_id);
	}
}

void answer_rpc(struct relayd *r, nng_msg *msg)
{
	const uint8_t *data = nng_msg_body(msg);
	size_t len = nng_msg_len(msg);
	const uint8_t *body = data + MSG_HEADER_LEN;
	struct msg_header h;

	if (msg_decode_header(data, len, &h)) {
		log_warnx("undecodable reply from stored dropped");
		return;
	}
	len -= MSG_HEADER_LEN;
	switch (h.type) {
	case MSG_EVENT_RESULT: answer_event_result(r, &h, body, len); break;
	case MSG_EVENT_RESULTS: answer_event_results(r, body, len); break;
	case MSG_QUERY_EVENTS: answer_query_events(r, &h, body, len); break;
	case MSG_QUERY_DONE: answer_query_done(r, &h, body, len); break;
	case MSG_QUERY_LAST: answer_query_last(r, &h, body, len); break;
	case MSG_HELLO_ACK: answer_hello_ack(r, body, len); break;
	case MSG_COUNT_RESULT: answer_count_result(r, &h, body, len); break;
	case MSG_MANAGE_RESULT: answer_manage_result(r, &h, body, len); break;
	case MSG_CONNS_ASK: connlist_ask(r, &h, body, len); break;
	case MSG_CONN_KICK: connlist_kick(r, &h, body, len); break;
	case MSG_NEG_REPLY: answer_neg_reply(r, body, len); break;
	default: log_warnx("unexpected %s from stored dropped", msg_type_name(h.type)); break;
	}
}

/* Queues one delivery: straight out if live, held back until EOSE if not.
 * Past held_deliveries held, a stored event is dropped and sent again from
 * the database once the subscription is live (replay.h). */
static void answer_deliver_one(struct relayd *r, const struct msg_target *t, struct shared *body,
			       uint64_t commit_seq)
{
	struct conn *c = conn_find(r->conns, t->conn_id);
	struct sub *s = c ? conn_sub_find_serial(c, t->sub_serial) : NULL;
	size_t n;
	char *head;

	if (!s) {
		atomic_fetch_add(&r->stats.stale_replies, 1);
		return;
	}
	if (c->closing)
		return; /* nothing goes out after a Close, held or not */
	if (s->restricted && !private_visible(relayd_cfg(r), body->data, body->len,
					      (const uint8_t(*)[32])s->viewers, s->nviewers))
		return;
	head = reply_event_head(s->id, s->id_len, &n);
	if (!head)
		return;
	body->refs++;
	if (s->state == SUB_LIVE) {
		send_frame(r, c, head, n, body, ']');
	} else if (s->held.count < relayd_cfg(r)->held_deliveries) {
		outq_push(&s->held, head, n, body, ']');
	} else {
		free(head);
		shared_unref(body);
		replay_held_dropped(r, s, commit_seq);
	}
}

/* stored's NIP-86 policy changed: the NIP-11 document shows its texts. */
static void answer_policy(struct relayd *r, const uint8_t *data, size_t len)
{
	struct msg_policy p;

	if (msg_decode_policy(data, len, &p))
		return;
	if (policy_apply(r, &p) && nip11_build(r))
		log_warnx("the NIP-11 document with the new name, description or restrictions"
			  " does not fit");
	msg_policy_release(&p);
}

/* stored's snapshot: kept for GET /metrics and /stats.json. */
static void answer_metrics(struct relayd *r, const void *body, size_t len)
{
	struct msg_metrics m;

	if (msg_decode_metrics(body, len, &m))
		return;
	buf_reset(&r->metrics_text);
	buf_reset(&r->stats_json);
	buf_append(&r->metrics_text, m.prometheus.ptr, m.prometheus.len);
	buf_append(&r->stats_json, m.summary.ptr, m.summary.len);
}

void answer_deliver(struct relayd *r, nng_msg *msg)
{
	const uint8_t *data = nng_msg_body(msg);
	size_t len = nng_msg_len(msg);
	struct msg_deliver m;
	struct msg_header h;
	struct shared *body;
	uint64_t lost, prev_commit_seq = r->last_commit_seq;

	if (msg_decode_header(data, len, &h))
		return;
	if (h.type == MSG_METRICS) {
		answer_metrics(r, data + MSG_HEADER_LEN, len - MSG_HEADER_LEN);
		return;
	}
	if (h.type == MSG_POLICY) {
		answer_policy(r, data + MSG_HEADER_LEN, len - MSG_HEADER_LEN);
		return;
	}
	if (h.type != MSG_DELIVER ||
	    msg_decode_deliver(data + MSG_HEADER_LEN, len - MSG_HEADER_LEN, &m))
		return;
	lost = gapcount_take(&r->delivered, h.request_id, m.seq);
	if (lost)
		atomic_fetch_add(&r->stats.deliver_gaps, lost);
	if (m.commit_seq > r->last_commit_seq)
		r->last_commit_seq = m.commit_seq;
	body = shared_new(m.event_json.ptr, m.event_json.len);
	if (body) {
		body->expiration = m.expiration;
		body->commit_seq = m.commit_seq;
	}
	for (uint32_t i = 0; body && i < m.ntargets; i++)
		answer_deliver_one(r, &m.targets[i], body, m.commit_seq);
	shared_unref(body);
	/* After this one: the range replayed ends before its commit. */
	replay_note(r, lost, m.commit_seq, prev_commit_seq);
	msg_deliver_release(&m);
}
