/*
 * verb_neg.c - NIP-77: ["NEG-OPEN", <sub id>, <filter>, <hex>],
 * ["NEG-MSG", <sub id>, <hex>] and ["NEG-CLOSE", <sub id>].
 *
 * The worker checks what the message alone shows (sub id, filter, hex,
 * size, authentication) and refuses with NEG-ERR; stored holds the session
 * and answers the rest (stored/negsess.h), its NEG_REPLY becoming NEG-MSG
 * or NEG-ERR (answer.c).  A refused NEG-OPEN also closes a session of the
 * same id, since NIP-77 says a NEG-OPEN replaces it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/filter.h"
#include "../common/hex.h"
#include "../common/utf8.h"
#include "../proto/msg.h"
#include "auth.h"
#include "lanepost.h"
#include "link.h"
#include "private.h"
#include "relayd.h"
#include "verbs.h"

/* The sub id of a NEG message, or NULL after a NOTICE or NEG-ERR. */
static const char *verb_neg_sub(struct verb_ctx *v, size_t *len)
{
	const cJSON *sub = cJSON_GetArrayItem(v->msg, 1);
	uint32_t max = relayd_cfg(v->r)->max_subid_length;
	size_t chars;
	char why[96];

	if (!cJSON_IsString(sub)) {
		lanepost_notice(v->r, v->conn_id, "invalid: the subscription id must be a string");
		return NULL;
	}
	*len = strlen(sub->valuestring);
	chars = utf8_chars(sub->valuestring, *len);
	if (chars == 0 || chars > max || *len > MSG_SUB_ID_MAX) {
		snprintf(why, sizeof(why), "invalid: the subscription id must have 1 to %u characters",
			 max);
		lanepost_neg_err(v->r, v->conn_id, sub->valuestring, *len, why);
		return NULL;
	}
	return sub->valuestring;
}

/* Sends NEG_CLOSE for sub: stored drops a session of that id if any. */
static void verb_neg_send_close(struct verb_ctx *v, const char *sub, size_t sub_len)
{
	struct msg_header h = msg_header_for((uint16_t)v->r->instance, link_request_id(v->r));
	struct msg_neg_close m = { v->conn_id, { sub, (uint32_t)sub_len } };
	struct buf out = BUF_INIT;

	if (msg_encode_neg_close(&out, &h, &m) == 0)
		link_send_control(v->r, h.request_id, out.data, out.len);
	buf_free(&out);
}

static void verb_neg_refuse(struct verb_ctx *v, const char *sub, size_t sub_len, const char *why)
{
	verb_neg_send_close(v, sub, sub_len);
	lanepost_neg_err(v->r, v->conn_id, sub, sub_len, why);
}

/* Decodes the hex message at index at into a new buffer (*len bytes), or
 * answers why not and returns NULL. */
static uint8_t *verb_neg_message(struct verb_ctx *v, int at, const char *sub, size_t sub_len,
				 size_t *len)
{
	const cJSON *hex = cJSON_GetArrayItem(v->msg, at);
	uint32_t max = relayd_cfg(v->r)->neg_frame_bytes;
	size_t n = cJSON_IsString(hex) ? strlen(hex->valuestring) : 0;
	uint8_t *bytes;
	char why[96];

	if (!n || n % 2) {
		verb_neg_refuse(v, sub, sub_len, "invalid: the message must be a non-empty hex string");
		return NULL;
	}
	if (n / 2 > max) {
		snprintf(why, sizeof(why), "blocked: a negentropy message may have at most %u bytes",
			 max);
		verb_neg_refuse(v, sub, sub_len, why);
		return NULL;
	}
	bytes = malloc(n / 2);
	if (!bytes || hex_decode(hex->valuestring, n, bytes, n / 2)) {
		free(bytes);
		verb_neg_refuse(v, sub, sub_len, bytes ? "invalid: the message must be lowercase hex"
						       : "error: out of memory");
		return NULL;
	}
	*len = n / 2;
	return bytes;
}

/* Whether the connection may read at all, and NIP-77 is on. */
static bool verb_neg_allowed(struct verb_ctx *v, const char *sub, size_t sub_len)
{
	if (!relayd_cfg(v->r)->negentropy) {
		verb_neg_refuse(v, sub, sub_len, "blocked: negentropy sync (NIP-77) is disabled here");
		return false;
	}
	if (v->r->auth_reads && !auth_any(v->auth, v->conn_id)) {
		verb_auth_challenge(v);
		verb_neg_refuse(v, sub, sub_len,
				"auth-required: this relay only serves authenticated clients");
		return false;
	}
	return true;
}

/* Parses the filter at index 2 into f, or answers why not. */
static bool verb_neg_filter(struct verb_ctx *v, const char *sub, size_t sub_len, struct filter *f)
{
	struct filter_limits lim = { relayd_cfg(v->r)->max_filter_values, UINT32_MAX };
	const cJSON *obj = cJSON_GetArrayItem(v->msg, 2);
	char why[160];

	if (!cJSON_IsObject(obj)) {
		verb_neg_refuse(v, sub, sub_len, "invalid: the filter must be a JSON object");
		return false;
	}
	if (filter_parse(obj, &lim, f, why, sizeof(why))) {
		verb_neg_refuse(v, sub, sub_len, why);
		return false;
	}
	if (private_filter_only(relayd_cfg(v->r), f) && !auth_any(v->auth, v->conn_id)) {
		verb_auth_challenge(v);
		verb_neg_refuse(v, sub, sub_len,
				"auth-required: these kinds are private; authenticate (NIP-42) as one of"
				" their parties");
		filter_free(f);
		return false;
	}
	return true;
}

static void verb_neg_send(struct verb_ctx *v, const char *sub, size_t sub_len, struct buf *out,
			  uint32_t request_id)
{
	if (link_send(v->r, request_id, out->data, out->len))
		lanepost_neg_err(v->r, v->conn_id, sub, sub_len,
				 "error: the relay is busy or restarting, retry");
}

void verb_neg_open(struct verb_ctx *v)
{
	size_t sub_len, len = 0;
	const char *sub = verb_neg_sub(v, &sub_len);
	struct msg_neg_open m = { .conn_id = v->conn_id };
	struct msg_header h;
	struct buf out = BUF_INIT;
	uint8_t *bytes;

	if (!sub || !verb_neg_allowed(v, sub, sub_len))
		return;
	if (v->nargs != 3) {
		verb_neg_refuse(v, sub, sub_len, "invalid: NEG-OPEN takes a sub id, a filter and a message");
		return;
	}
	if (!verb_neg_filter(v, sub, sub_len, &m.filter))
		return;
	bytes = verb_neg_message(v, 3, sub, sub_len, &len);
	if (bytes) {
		h = msg_header_for((uint16_t)v->r->instance, link_request_id(v->r));
		m.sub_id = (struct msg_str){ sub, (uint32_t)sub_len };
		m.message = (struct msg_str){ (const char *)bytes, (uint32_t)len };
		m.nviewers = auth_list(v->auth, v->conn_id, m.viewers);
		if (msg_encode_neg_open(&out, &h, &m))
			lanepost_neg_err(v->r, v->conn_id, sub, sub_len, "error: out of memory");
		else
			verb_neg_send(v, sub, sub_len, &out, h.request_id);
	}
	free(bytes);
	buf_free(&out);
	filter_free(&m.filter);
}

void verb_neg_msg(struct verb_ctx *v)
{
	size_t sub_len, len = 0;
	const char *sub = verb_neg_sub(v, &sub_len);
	struct msg_header h;
	struct buf out = BUF_INIT;
	uint8_t *bytes;

	if (!sub || !verb_neg_allowed(v, sub, sub_len))
		return;
	if (v->nargs != 2) {
		verb_neg_refuse(v, sub, sub_len, "invalid: NEG-MSG takes a sub id and a message");
		return;
	}
	bytes = verb_neg_message(v, 2, sub, sub_len, &len);
	if (!bytes)
		return;
	h = msg_header_for((uint16_t)v->r->instance, link_request_id(v->r));
	{
		struct msg_neg_msg m = { v->conn_id, { sub, (uint32_t)sub_len },
					 { (const char *)bytes, (uint32_t)len } };

		if (msg_encode_neg_msg(&out, &h, &m))
			lanepost_neg_err(v->r, v->conn_id, sub, sub_len, "error: out of memory");
		else
			verb_neg_send(v, sub, sub_len, &out, h.request_id);
	}
	free(bytes);
	buf_free(&out);
}

/* NEG-CLOSE gets no answer (NIP-77), like CLOSE. */
void verb_neg_close(struct verb_ctx *v)
{
	const cJSON *sub = cJSON_GetArrayItem(v->msg, 1);
	size_t len;

	if (v->nargs != 1 || !cJSON_IsString(sub)) {
		lanepost_notice(v->r, v->conn_id, "invalid: NEG-CLOSE takes one subscription id string");
		return;
	}
	len = strlen(sub->valuestring);
	if (len >= 1 && len <= MSG_SUB_ID_MAX)
		verb_neg_send_close(v, sub->valuestring, len);
}
