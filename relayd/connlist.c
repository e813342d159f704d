/* connlist.c - listing and kicking connections for relayctl (see connlist.h). */
#include "connlist.h"

#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/log.h"
#include "auth.h"
#include "conn.h"
#include "ingress.h"
#include "link.h"
#include "relayd.h"
#include "send.h"

_Static_assert(MSG_VIEWERS_MAX == AUTH_MAX_PUBKEYS, "a listed connection holds all its pubkeys");

/* The list being built by one pass over the table. */
struct connlist_build {
	struct relayd *r;
	struct msg_conns_list list;
	uint8_t (*keys)[MSG_VIEWERS_MAX][32]; /* each entry's pubkeys */
	uint32_t room;  /* entries allocated */
	size_t bytes;   /* the body so far */
};

/* Sends an encoded answer to stored and frees it. */
static void connlist_send(struct relayd *r, struct buf *out, const char *what)
{
	int rc = link_send_control(r, link_request_id(r), out->data, out->len);

	if (rc)
		log_warnx("%s for stored not sent: %s", what, err_name(rc));
	buf_free(out);
}

static void connlist_add(struct conn *c, void *arg)
{
	struct connlist_build *b = arg;
	struct msg_conn_info *info;

	if (c->closing)
		return;
	b->list.total++;
	if (b->list.count == b->room)
		return;
	info = &b->list.conns[b->list.count];
	*info = (struct msg_conn_info){ .conn_id = c->id,
		.address = { c->ip, (uint32_t)strnlen(c->ip, MSG_CONN_ADDRESS_MAX) },
		.since = c->opened_at > 0 ? (uint64_t)c->opened_at : 0,
		.messages_in = c->messages_in, .messages_out = c->messages_out,
		.subscriptions = c->nsubs };
	if (b->r->ingress)
		info->npubkeys = ingress_auth_list(b->r->ingress, c->id, b->keys[b->list.count]);
	info->pubkeys = b->keys[b->list.count][0];
	if (b->bytes + msg_conn_info_len(info) > MSG_CONNS_LIST_BYTES) {
		b->room = b->list.count; /* full: the rest are only counted */
		return;
	}
	b->bytes += msg_conn_info_len(info);
	b->list.count++;
}

void connlist_ask(struct relayd *r, const struct msg_header *h, const void *body, size_t len)
{
	struct msg_header out_h = msg_header_for((uint16_t)r->instance, h->request_id);
	struct connlist_build b = { .r = r, .bytes = 4 + 4 }; /* total, count */
	struct msg_conns_ask m;
	struct buf out = BUF_INIT;
	uint32_t open = conn_count(r->conns);

	if (msg_decode_conns_ask(body, len, &m)) {
		log_warnx("undecodable conns_ask from stored dropped");
		return;
	}
	b.room = m.max < open ? m.max : open;
	b.list.conns = b.room ? calloc(b.room, sizeof(*b.list.conns)) : NULL;
	b.keys = b.room ? calloc(b.room, sizeof(*b.keys)) : NULL;
	if (!b.list.conns || !b.keys)
		b.room = 0; /* without memory: only the count */
	conn_foreach(r->conns, connlist_add, &b);
	if (msg_encode_conns_list(&out, &out_h, &b.list) == 0)
		connlist_send(r, &out, "a connection list");
	else
		buf_free(&out);
	free(b.list.conns);
	free(b.keys);
}

void connlist_kick(struct relayd *r, const struct msg_header *h, const void *body, size_t len)
{
	struct msg_header out_h = msg_header_for((uint16_t)r->instance, h->request_id);
	struct msg_conn_kick m;
	struct msg_conn_kicked answer = { 0 };
	struct buf out = BUF_INIT;
	char reason[MSG_CLOSE_REASON_MAX + 1];
	struct conn *c;

	if (msg_decode_conn_kick(body, len, &m)) {
		log_warnx("undecodable conn_kick from stored dropped");
		return;
	}
	c = conn_find(r->conns, m.conn_id);
	answer.conn_id = m.conn_id;
	answer.found = c && !c->closing;
	if (answer.found) {
		if (m.reason.len)
			memcpy(reason, m.reason.ptr, m.reason.len);
		reason[m.reason.len] = '\0';
		log_info("closing %s: kicked by relayctl (%s)", c->ip, reason);
		send_close(c, (enum lws_close_status)m.code, reason);
	}
	if (msg_encode_conn_kicked(&out, &out_h, &answer) == 0)
		connlist_send(r, &out, "a kick's answer");
	else
		buf_free(&out);
}
