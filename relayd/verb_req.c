/*
 * verb_req.c - ["REQ", <sub id>, <filter>...] and ["CLOSE", <sub id>].
 *
 * Everything that needs only the message is checked here (sub id, number
 * of filters, each filter); a bad REQ is answered CLOSED with a NIP-01
 * prefix.  Per-connection limits (how many subscriptions are open) need the
 * connection, so the service thread checks them (service.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/filter.h"
#include "../common/utf8.h"
#include "../proto/msg.h"
#include "auth.h"
#include "lanepost.h"
#include "link.h"
#include "private.h"
#include "mailbox.h"
#include "relayd.h"
#include "verbs.h"

/* Answers a refused REQ (req) or COUNT with CLOSED; a refused REQ also
 * ends the subscription its id named (lanepost_req_refused()). */
static void verb_refuse(struct verb_ctx *v, bool req, const char *sub, size_t sub_len,
			const char *why)
{
	if (req)
		lanepost_req_refused(v->r, v->conn_id, sub, sub_len, why);
	else
		lanepost_closed(v->r, v->conn_id, sub, sub_len, why);
}

/* Checks the sub id; on failure answers and returns NULL. */
static const char *verb_sub_id(struct verb_ctx *v, bool req, size_t *len)
{
	const cJSON *sub = cJSON_GetArrayItem(v->msg, 1);
	size_t chars;
	char why[96];

	if (!cJSON_IsString(sub)) {
		lanepost_notice(v->r, v->conn_id, "invalid: the subscription id must be a string");
		return NULL;
	}
	*len = strlen(sub->valuestring);
	chars = utf8_chars(sub->valuestring, *len); /* NIP-01 counts characters */
	if (chars == 0 || chars > relayd_cfg(v->r)->max_subid_length) {
		snprintf(why, sizeof(why), "invalid: the subscription id must have 1 to %u characters",
			 relayd_cfg(v->r)->max_subid_length);
		verb_refuse(v, req, sub->valuestring, *len, why);
		return NULL;
	}
	return sub->valuestring;
}

/* NIP-42: refuses reads from unauthenticated clients when configured. */
static bool verb_read_allowed(struct verb_ctx *v, bool req, const char *sub, size_t sub_len)
{
	if (!v->r->auth_reads || auth_any(v->auth, v->conn_id))
		return true;
	verb_auth_challenge(v);
	verb_refuse(v, req, sub, sub_len, "auth-required: this relay only serves authenticated clients");
	return false;
}

static struct filter *verb_filters(struct verb_ctx *v, bool req, const char *sub, size_t sub_len,
				   uint32_t n)
{
	struct filter_limits lim = { relayd_cfg(v->r)->max_filter_values, relayd_cfg(v->r)->max_limit };
	struct filter *filters = calloc(n, sizeof(*filters));
	char why[160];

	if (!filters) {
		verb_refuse(v, req, sub, sub_len, "error: out of memory");
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		const cJSON *obj = cJSON_GetArrayItem(v->msg, (int)i + 2);
		int rc = cJSON_IsObject(obj) ? filter_parse(obj, &lim, &filters[i], why, sizeof(why))
					     : (snprintf(why, sizeof(why), "invalid: a filter must be a JSON object"), -1);

		if (rc) {
			verb_refuse(v, req, sub, sub_len, why);
			filters_free(filters, i);
			return NULL;
		}
	}
	return filters;
}

/* Whether every filter asks for private kinds only, from a connection that
 * has not authenticated: nothing could be found for it (private.h). */
static bool verb_private_only(struct verb_ctx *v, const struct filter *filters, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!private_filter_only(relayd_cfg(v->r), &filters[i]))
			return false;
	return !auth_any(v->auth, v->conn_id);
}

void verb_req(struct verb_ctx *v)
{
	size_t sub_len;
	const char *sub = verb_sub_id(v, true, &sub_len);
	uint32_t n = v->nargs > 1 ? (uint32_t)(v->nargs - 1) : 0;
	struct filter *filters;
	struct mail *m;
	char why[96];

	if (!sub || !verb_read_allowed(v, true, sub, sub_len))
		return;
	if (n == 0 || n > relayd_cfg(v->r)->max_filters) {
		snprintf(why, sizeof(why), "invalid: a REQ takes 1 to %u filters", relayd_cfg(v->r)->max_filters);
		verb_refuse(v, true, sub, sub_len, why);
		return;
	}
	filters = verb_filters(v, true, sub, sub_len, n);
	if (!filters)
		return;
	if (verb_private_only(v, filters, n)) {
		verb_auth_challenge(v);
		verb_refuse(v, true, sub, sub_len,
			    "auth-required: these kinds are private; authenticate (NIP-42) as one of"
			    " their parties");
		filters_free(filters, n);
		return;
	}
	m = mail_new(MAIL_SUB_OPEN, v->conn_id);
	if (!m || sub_len >= sizeof(m->sub_id)) {
		verb_refuse(v, true, sub, sub_len, "error: out of memory");
		mail_free(m);
		filters_free(filters, n);
		return;
	}
	memcpy(m->sub_id, sub, sub_len);
	m->sub_id_len = (uint32_t)sub_len;
	m->filters = filters;
	m->nfilters = n;
	for (uint32_t i = 0; i < n; i++)
		m->restricted |= private_filter_reaches(relayd_cfg(v->r), &filters[i]);
	if (m->restricted)
		m->nviewers = auth_list(v->auth, v->conn_id, m->viewers);
	mailbox_post(v->r->mailbox, m);
}

/* ["COUNT", <query id>, <filter>...] (NIP-45): checked like a REQ, then
 * answered by stored directly; nothing is registered. */
void verb_count(struct verb_ctx *v)
{
	size_t sub_len;
	const char *sub = verb_sub_id(v, false, &sub_len);
	uint32_t n = v->nargs > 1 ? (uint32_t)(v->nargs - 1) : 0;
	uint32_t request_id;
	struct filter *filters;
	struct buf out = BUF_INIT;
	char why[96];

	if (!sub || !verb_read_allowed(v, false, sub, sub_len))
		return;
	if (n == 0 || n > relayd_cfg(v->r)->max_filters) {
		snprintf(why, sizeof(why), "invalid: a COUNT takes 1 to %u filters", relayd_cfg(v->r)->max_filters);
		lanepost_closed(v->r, v->conn_id, sub, sub_len, why);
		return;
	}
	filters = verb_filters(v, false, sub, sub_len, n);
	if (!filters)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (private_filter_reaches(relayd_cfg(v->r), &filters[i])) {
			lanepost_closed(v->r, v->conn_id, sub, sub_len,
				       "restricted: counts that include private kinds are not served; "
				       "list the kinds to count");
			filters_free(filters, n);
			return;
		}
	}
	request_id = link_request_id(v->r);
	{
		struct msg_header h = msg_header_for((uint16_t)v->r->instance, request_id);
		struct msg_count m = { v->conn_id, { sub, (uint32_t)sub_len }, n, filters };
		struct mail *pending = mail_new(MAIL_COUNT_PENDING, v->conn_id);
		/* Allocated now: once the COUNT is noted, only this mail can
		 * unnote it if the send fails. */
		struct mail *failed = mail_new(MAIL_COUNT_FAILED, v->conn_id);

		if (msg_encode_count(&out, &h, &m) || !pending || !failed ||
		    sub_len >= sizeof(pending->sub_id)) {
			mail_free(pending);
			mail_free(failed);
			lanepost_closed(v->r, v->conn_id, sub, sub_len, "error: out of memory");
		} else {
			/* Noted before it is sent (mailbox.h): the service thread
			 * closes it if stored goes away before answering. */
			pending->request_id = request_id;
			memcpy(pending->sub_id, sub, sub_len);
			pending->sub_id_len = (uint32_t)sub_len;
			mailbox_post(v->r->mailbox, pending);
			failed->request_id = request_id;
			if (link_send(v->r, request_id, out.data, out.len))
				mailbox_post(v->r->mailbox, failed);
			else
				mail_free(failed);
		}
	}
	buf_free(&out);
	filters_free(filters, n);
}

void verb_close(struct verb_ctx *v)
{
	const cJSON *sub = cJSON_GetArrayItem(v->msg, 1);
	struct mail *m;
	size_t len;

	if (v->nargs != 1 || !cJSON_IsString(sub)) {
		lanepost_notice(v->r, v->conn_id, "invalid: CLOSE takes one subscription id string");
		return;
	}
	len = strlen(sub->valuestring);
	m = mail_new(MAIL_SUB_CLOSE, v->conn_id);
	if (!m || len >= sizeof(m->sub_id)) {
		mail_free(m);
		return;
	}
	memcpy(m->sub_id, sub->valuestring, len);
	m->sub_id_len = (uint32_t)len;
	mailbox_post(v->r->mailbox, m);
}
