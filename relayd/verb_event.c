/*
 * verb_event.c - ["EVENT", <event>]: validate, verify, hand to stored.
 *
 * The OK for an accepted event comes from stored after its commit; this
 * handler answers only the events it refuses itself.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "../proto/msg.h"
#include "auth.h"
#include "bundle.h"
#include "lanepost.h"
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
		lanepost_notice(v->r, v->conn_id, why);
		return;
	}
	text = reply_ok(id, false, why, &len);
	lanepost_text(v->r, v->conn_id, text, len);
}

static void verb_event_limits(const struct relayd *r, struct event_limits *lim)
{
	lim->max_tags = relayd_cfg(r)->max_event_tags;
	lim->max_tag_value = relayd_cfg(r)->max_message_bytes;
	lim->max_content = relayd_cfg(r)->max_content_length;
	lim->now = (int64_t)time(NULL);
	lim->max_past_seconds = relayd_cfg(r)->created_at_max_past;
	lim->max_future_seconds = relayd_cfg(r)->created_at_max_future;
}

/* Sends a verified event to stored, in the lane's bundle; the service
 * thread tracks the answer (told by the bundle when it is sent). */
static void verb_event_forward(struct verb_ctx *v, struct event *ev)
{
	uint32_t request_id = link_request_id(v->r);
	struct msg_header h = msg_header_for((uint16_t)v->r->instance, request_id);
	struct msg_event_store m = { .conn_id = v->conn_id, .event = *ev };
	struct buf out = BUF_INIT;
	char source[MSG_SOURCE_MAX + 1] = "";

	m.source.ptr = source;
	if (relayd_cfg(v->r)->plugin[0]) /* its sourceInfo (stored/plugin.h) */
		m.source.len = (uint32_t)auth_peer(v->auth, v->conn_id, source, sizeof(source));

	if (msg_encode_event_store(&out, &h, &m)) {
		struct mail_list failed = { NULL, NULL };

		mail_list_append(&failed, mail_new_event(MAIL_EVENT_PENDING, v->conn_id,
							 request_id, ev->id));
		mail_list_append(&failed, mail_new_event(MAIL_EVENT_FAILED, v->conn_id,
							 request_id, ev->id));
		mailbox_post_list(v->r->mailbox, &failed);
	} else {
		bundle_add(v->r, v->bundle, &out, v->conn_id, request_id, ev->id);
	}
	buf_free(&out);
}

/* NIP-62: does this kind 62 name this relay (or all relays)? */
static bool verb_event_vanish_here(const struct relayd *r, const cJSON *obj)
{
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(obj, "tags"), *tag;
	char mine[CONFIG_TEXT_MAX], theirs[CONFIG_TEXT_MAX];

	auth_url_key(r->relay_url, mine, sizeof(mine));
	cJSON_ArrayForEach(tag, tags) {
		const cJSON *name = cJSON_GetArrayItem(tag, 0), *value = cJSON_GetArrayItem(tag, 1);

		if (!cJSON_IsString(name) || strcmp(name->valuestring, "relay") || !cJSON_IsString(value))
			continue;
		if (strcmp(value->valuestring, "ALL_RELAYS") == 0)
			return true;
		auth_url_key(value->valuestring, theirs, sizeof(theirs));
		if (strcmp(mine, theirs) == 0)
			return true;
	}
	return false;
}

/* NIP-13: leading zero bits of the id. */
static int verb_event_pow(const uint8_t id[32])
{
	int bits = 0;

	for (int i = 0; i < 32; i++) {
		if (id[i]) {
			return bits + __builtin_clz((unsigned)id[i] << 24);
		}
		bits += 8;
	}
	return bits;
}

/* NIP-42/70: who may publish on this connection. */
static const char *verb_event_access(struct verb_ctx *v, const struct event *ev)
{
	bool authed = auth_any(v->auth, v->conn_id);

	if (ev->kind == AUTH_KIND)
		return "invalid: kind 22242 is only for AUTH messages";
	if (v->r->auth_writes && !authed)
		return "auth-required: this relay only accepts events from authenticated clients";
	if (!(ev->flags & EVENT_FLAG_PROTECTED))
		return NULL;
	if (!authed)
		return "auth-required: this event is protected; authenticate as its author to publish it";
	if (!auth_has(v->auth, v->conn_id, ev->pubkey))
		return "restricted: a protected event may only be published by its author";
	return NULL;
}

/* Whether obj, an event as JSON, has a ["-"] tag (NIP-70). */
static bool verb_event_json_protected(const cJSON *obj)
{
	const cJSON *tag;

	cJSON_ArrayForEach(tag, cJSON_GetObjectItemCaseSensitive(obj, "tags")) {
		const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(tag, 0));

		if (name && strcmp(name, "-") == 0)
			return true;
	}
	return false;
}

/* NIP-70: a repost (kind 6 or 16) whose content embeds a protected event
 * is refused unless the connection authenticated as that event's author. */
static const char *verb_event_repost(struct verb_ctx *v, const struct event *ev)
{
	const char *text = ev->content, *author;
	uint8_t pubkey[32];
	cJSON *inner;
	bool refused;

	if ((ev->kind != 6 && ev->kind != 16) || !text)
		return NULL;
	text += strspn(text, " \t\r\n");
	if (*text != '{')
		return NULL; /* empty, as NIP-18 asks of such reposts, or no event */
	inner = json_parse(ev->content, ev->content_len, false);
	author = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(inner, "pubkey"));
	refused = verb_event_json_protected(inner) &&
		  !(author && strlen(author) == 64 && !hex_decode(author, 64, pubkey, 32) &&
		    auth_has(v->auth, v->conn_id, pubkey));
	cJSON_Delete(inner);
	return refused ? "blocked: a repost may not embed a protected event (NIP-70); leave its"
			 " content empty"
		       : NULL;
}

/* Refusals that need the clock, the connection or the relay's identity. */
static const char *verb_event_policy(struct verb_ctx *v, const cJSON *obj, struct event *ev)
{
	static __thread char pow_reason[96];
	const char *why = verb_event_access(v, ev);
	int pow;

	if (why || (why = verb_event_repost(v, ev)))
		return why;
	if (relayd_cfg(v->r)->min_pow_difficulty &&
	    (pow = verb_event_pow(ev->id)) < (int)relayd_cfg(v->r)->min_pow_difficulty) {
		snprintf(pow_reason, sizeof(pow_reason), "pow: difficulty %d is less than %u", pow,
			 relayd_cfg(v->r)->min_pow_difficulty);
		return pow_reason;
	}
	if (ev->expiration && ev->expiration <= (int64_t)time(NULL))
		return "invalid: this event has expired";
	if (ev->kind == 62 && verb_event_vanish_here(v->r, obj))
		ev->flags |= EVENT_FLAG_VANISH_HERE;
	return NULL;
}

void verb_event(struct verb_ctx *v)
{
	const cJSON *obj = cJSON_GetArrayItem(v->msg, 1);
	struct event_limits lim;
	struct event ev;
	char why[160];

	if (v->nargs != 1 || !cJSON_IsObject(obj)) {
		/* With a readable id the client gets its OK false (NIP-01: every
		 * EVENT is answered with OK), else a NOTICE. */
		verb_event_refuse(v, cJSON_IsObject(obj) ? obj : NULL,
				  "invalid: EVENT takes exactly one event object");
		return;
	}
	verb_event_limits(v->r, &lim);
	const char *refusal;

	if (event_parse(obj, &lim, &ev, why, sizeof(why))) {
		verb_event_refuse(v, obj, why);
		return;
	}
	if ((refusal = verb_event_policy(v, obj, &ev))) {
		if (strncmp(refusal, "auth-required:", 14) == 0)
			verb_auth_challenge(v);
		verb_event_refuse(v, obj, refusal);
		event_free(&ev);
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
