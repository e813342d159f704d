/*
 * verb_event.c - ["EVENT", <event>]: validate, verify, hand to stored.
 *
 * The OK for an accepted event comes from stored after its commit; this
 * handler answers only the events it refuses itself.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/hex.h"
#include "../proto/msg.h"
#include "ingress.h"
#include "link.h"
#include "mailbox.h"
#include "relayd.h"
#include "reply.h"
#include "verbs.h"

/* True if the event's "id" is well-formed, so a refusal can name it. */
static int verb_event_has_id(const cJSON *obj, uint8_t id[32])
{
	const cJSON *field = cJSON_GetObjectItemCaseSensitive(obj, "id");

	return cJSON_IsString(field) &&
	       hex_decode(field->valuestring, strlen(field->valuestring), id, 32) == 0;
}

static void verb_event_refuse(struct verb_ctx *v, const cJSON *obj, const char *why)
{
	uint8_t id[32];
	size_t len = 0;
	char *text;

	atomic_fetch_add(&v->r->stats.events_rejected, 1);
	if (!verb_event_has_id(obj, id)) {
		ingress_notice(v->r, v->conn_id, why);
		return;
	}
	text = reply_ok(id, false, why, &len);
	ingress_send_text(v->r, v->conn_id, text, len);
}

static void verb_event_limits(const struct relayd *r, struct event_limits *lim)
{
	lim->max_tags = r->cfg.max_event_tags;
	lim->max_tag_value = r->cfg.max_message_bytes;
	lim->max_content = r->cfg.max_content_bytes;
	lim->now = (int64_t)time(NULL);
	lim->max_past_seconds = r->cfg.created_at_max_past;
	lim->max_future_seconds = r->cfg.created_at_max_future;
}

static void verb_event_post(struct verb_ctx *v, enum mail_kind kind, uint32_t request_id,
			    const uint8_t id[32])
{
	struct mail *m = mail_new(kind, v->conn_id);

	if (!m)
		return;
	m->request_id = request_id;
	memcpy(m->event_id, id, 32);
	mailbox_post(v->r->mailbox, m);
}

/* Sends a verified event to stored; the service thread tracks the answer. */
static void verb_event_forward(struct verb_ctx *v, struct event *ev)
{
	uint32_t request_id = link_request_id(v->r);
	struct msg_header h = { PROTO_VERSION, MSG_EVENT_STORE, (uint16_t)v->r->instance, request_id };
	struct msg_event_store m = { .conn_id = v->conn_id, .event = *ev };
	struct buf out = BUF_INIT;

	verb_event_post(v, MAIL_EVENT_PENDING, request_id, ev->id);
	if (msg_encode_event_store(&out, &h, &m) ||
	    link_send(v->r, request_id, out.data, out.len))
		verb_event_post(v, MAIL_EVENT_FAILED, request_id, ev->id);
	buf_free(&out);
}

void verb_event(struct verb_ctx *v)
{
	const cJSON *obj = cJSON_GetArrayItem(v->msg, 1);
	struct event_limits lim;
	struct event ev;
	char why[160];

	if (v->nargs != 1 || !cJSON_IsObject(obj)) {
		verb_event_refuse(v, NULL, "invalid: EVENT takes exactly one event object");
		return;
	}
	verb_event_limits(v->r, &lim);
	if (event_parse(obj, &lim, &ev, why, sizeof(why))) {
		verb_event_refuse(v, obj, why);
		return;
	}
	if (sig_verify_event(v->verifier, &ev)) {
		verb_event_refuse(v, obj, "invalid: signature does not verify");
		event_free(&ev);
		return;
	}
	verb_event_forward(v, &ev);
	event_free(&ev);
}
