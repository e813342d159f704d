/*
 * admin_conns.c - the admin commands "conns" and "kick": the workers' open
 * connections, and closing one of them (see admin.h for the replies).
 *
 * stored does not know the connections; each worker does.  The admin
 * thread asks every connected worker on its reply channel (workask.h) and
 * waits up to conns_timeout_ms for the answers.  A worker that has not
 * answered by then is named in the reply under "unanswered", so one stuck
 * worker neither hides the others nor holds relayctl for long.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hex.h"
#include "../proto/msg.h"
#include "admin_cmds.h"
#include "reply.h"
#include "stored.h"

_Static_assert(STORED_MAX_WORKERS <= WORKASK_WORKERS, "every worker can be asked");

/* A kick's websocket Close: policy violation, and the default reason. */
#define ADMIN_KICK_CODE 1008
#define ADMIN_KICK_REASON "closed by the relay's operator"

/* Connection ids pass 2^53, which a JSON number need not hold exactly:
 * they travel as decimal strings. */
static void admin_add_conn_id(cJSON *o, uint64_t id)
{
	char text[24];

	snprintf(text, sizeof(text), "%llu", (unsigned long long)id);
	cJSON_AddStringToObject(o, ADMIN_F_CONN_ID, text);
}

typedef int (*admin_ask_encode)(struct buf *out, const struct msg_header *h, const void *m);

/* Sends one worker the question and tells the wait to expect its answer;
 * one that cannot be sent is given up at once. */
static void admin_ask_one(struct stored *s, struct rpc_return to, admin_ask_encode encode,
			  const void *m)
{
	struct msg_header h = msg_header_for(to.worker, to.request_id);
	struct buf out = BUF_INIT;

	workask_expect(&s->ask, to.worker); /* before its answer can arrive */
	if (encode(&out, &h, m) || reply_send(s, &to, out.data, out.len))
		workask_give_up(&s->ask, to.worker);
	buf_free(&out);
}

/* Asks every connected worker and waits for the answers, of type answer;
 * the caller reads them (workask_answer_of) and ends the question. */
static void admin_ask_all(struct stored *s, uint8_t answer, admin_ask_encode encode, const void *m)
{
	struct rpc_return to[STORED_MAX_WORKERS];
	uint32_t id = workask_begin(&s->ask, answer);
	int n = 0;

	pthread_mutex_lock(&s->workers_lock);
	for (int w = 0; w < STORED_MAX_WORKERS; w++)
		if (s->workers[w].present)
			to[n++] = (struct rpc_return){ s->workers[w].pipe, (uint16_t)w, id };
	pthread_mutex_unlock(&s->workers_lock);
	for (int i = 0; i < n; i++)
		admin_ask_one(s, to[i], encode, m);
	workask_finish(&s->ask, (int)s->cfg.conns_timeout_ms);
}

static int admin_encode_conns_ask(struct buf *out, const struct msg_header *h, const void *m)
{
	return msg_encode_conns_ask(out, h, m);
}

static int admin_encode_conn_kick(struct buf *out, const struct msg_header *h, const void *m)
{
	return msg_encode_conn_kick(out, h, m);
}

/* ---- conns ---- */

/* One listed connection and its worker, for sorting. */
struct admin_conn {
	uint16_t worker;
	const struct msg_conn_info *info;
};

static int admin_conn_order(const void *x, const void *y)
{
	const struct admin_conn *a = x, *b = y;

	if (a->worker != b->worker)
		return a->worker < b->worker ? -1 : 1;
	if (a->info->conn_id != b->info->conn_id)
		return a->info->conn_id < b->info->conn_id ? -1 : 1;
	return 0;
}

static cJSON *admin_conn_json(const struct admin_conn *c)
{
	const struct msg_conn_info *info = c->info;
	cJSON *o = cJSON_CreateObject(), *keys;
	char address[MSG_CONN_ADDRESS_MAX + 1], hex[65];

	if (info->address.len)
		memcpy(address, info->address.ptr, info->address.len);
	address[info->address.len] = '\0';
	cJSON_AddNumberToObject(o, ADMIN_F_WORKER, c->worker);
	admin_add_conn_id(o, info->conn_id);
	cJSON_AddStringToObject(o, ADMIN_F_ADDRESS, address);
	admin__add_u64(o, ADMIN_F_SINCE, info->since);
	admin__add_u64(o, ADMIN_F_MESSAGES_IN, info->messages_in);
	admin__add_u64(o, ADMIN_F_MESSAGES_OUT, info->messages_out);
	admin__add_u64(o, ADMIN_F_SUBSCRIPTIONS, info->subscriptions);
	keys = cJSON_AddArrayToObject(o, ADMIN_F_PUBKEYS);
	for (uint32_t i = 0; i < info->npubkeys; i++) {
		hex_encode(info->pubkeys + (size_t)i * 32, 32, hex);
		cJSON_AddItemToArray(keys, cJSON_CreateString(hex));
	}
	return o;
}

/* The decoded answers of one conns question. */
struct admin_conns {
	struct msg_conns_list lists[STORED_MAX_WORKERS];
	uint64_t total;     /* open connections over the workers that answered */
	uint32_t entries;   /* connections the answers list */
	cJSON *unanswered;  /* worker numbers */
};

static void admin_conns_collect(struct stored *s, struct admin_conns *c)
{
	for (uint16_t w = 0; w < STORED_MAX_WORKERS; w++) {
		const struct buf *b = workask_answer_of(&s->ask, w);

		if (!workask_was_asked(&s->ask, w))
			continue;
		if (!b || msg_decode_conns_list(b->data, b->len, &c->lists[w])) {
			cJSON_AddItemToArray(c->unanswered, cJSON_CreateNumber(w));
			continue;
		}
		c->total += c->lists[w].total;
		c->entries += c->lists[w].count;
	}
}

/* The listed connections sorted by worker and id, at most max of them. */
static cJSON *admin_conns_list(struct admin_conns *c, uint32_t max, uint32_t *listed)
{
	struct admin_conn *all = c->entries ? calloc(c->entries, sizeof(*all)) : NULL;
	cJSON *list = cJSON_CreateArray();
	uint32_t n = 0;

	for (int w = 0; all && w < STORED_MAX_WORKERS; w++)
		for (uint32_t i = 0; i < c->lists[w].count; i++)
			all[n++] = (struct admin_conn){ (uint16_t)w, &c->lists[w].conns[i] };
	qsort(all, n, sizeof(*all), admin_conn_order);
	*listed = n < max ? n : max;
	for (uint32_t i = 0; i < *listed; i++)
		cJSON_AddItemToArray(list, admin_conn_json(&all[i]));
	free(all);
	return list;
}

cJSON *admin__conns(struct admin *a, const cJSON *req)
{
	const cJSON *max_item = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_MAX);
	struct msg_conns_ask ask = { a->s->cfg.conns_list_max };
	struct admin_conns *c = calloc(1, sizeof(*c));
	cJSON *reply, *list;
	uint32_t listed = 0;

	if (!c)
		return admin__error("out of memory");
	if (cJSON_IsNumber(max_item) && max_item->valuedouble >= 0 &&
	    max_item->valuedouble < ask.max)
		ask.max = (uint32_t)max_item->valuedouble;
	c->unanswered = cJSON_CreateArray();
	admin_ask_all(a->s, MSG_CONNS_LIST, admin_encode_conns_ask, &ask);
	admin_conns_collect(a->s, c);
	list = admin_conns_list(c, ask.max, &listed);
	reply = cJSON_CreateObject();
	admin__add_u64(reply, ADMIN_F_TOTAL, c->total);
	admin__add_u64(reply, ADMIN_F_LISTED, listed);
	cJSON_AddBoolToObject(reply, ADMIN_F_TRUNCATED, listed < c->total);
	cJSON_AddItemToObject(reply, ADMIN_F_CONN_LIST, list);
	cJSON_AddItemToObject(reply, ADMIN_F_UNANSWERED, c->unanswered);
	for (int w = 0; w < STORED_MAX_WORKERS; w++)
		msg_conns_list_release(&c->lists[w]);
	workask_end(&a->s->ask);
	free(c);
	return reply;
}

/* ---- kick ---- */

/* The request's conn_id: a decimal string as conns gives it, or a whole
 * number up to 2^53; 0 if it is neither. */
static uint64_t admin_kick_target(const cJSON *req)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_CONN_ID);
	unsigned long long v;
	char *end;

	if (cJSON_IsNumber(id))
		return id->valuedouble >= 1 && id->valuedouble <= 9007199254740992.0 &&
			       id->valuedouble == (double)(uint64_t)id->valuedouble
			       ? (uint64_t)id->valuedouble
			       : 0;
	if (!cJSON_IsString(id) || id->valuestring[0] < '0' || id->valuestring[0] > '9')
		return 0;
	errno = 0;
	v = strtoull(id->valuestring, &end, 10);
	return errno || *end ? 0 : (uint64_t)v;
}

/* Which workers closed it, and which did not answer. */
static void admin_kick_collect(struct stored *s, cJSON *kicked, cJSON *unanswered)
{
	for (uint16_t w = 0; w < STORED_MAX_WORKERS; w++) {
		const struct buf *b = workask_answer_of(&s->ask, w);
		struct msg_conn_kicked m;

		if (!workask_was_asked(&s->ask, w))
			continue;
		if (!b || msg_decode_conn_kicked(b->data, b->len, &m))
			cJSON_AddItemToArray(unanswered, cJSON_CreateNumber(w));
		else if (m.found)
			cJSON_AddItemToArray(kicked, cJSON_CreateNumber(w));
	}
}

cJSON *admin__kick(struct admin *a, const cJSON *req)
{
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_REASON));
	struct msg_conn_kick kick = { .conn_id = admin_kick_target(req), .code = ADMIN_KICK_CODE };
	cJSON *reply, *kicked, *unanswered;

	if (!kick.conn_id)
		return admin__error("kick: conn_id must be a connection id as relayctl conns shows it");
	if (!why || !*why)
		why = ADMIN_KICK_REASON;
	if (strlen(why) > MSG_CLOSE_REASON_MAX)
		return admin__error("kick: the reason is over %d bytes", MSG_CLOSE_REASON_MAX);
	kick.reason = (struct msg_str){ why, (uint32_t)strlen(why) };
	admin_ask_all(a->s, MSG_CONN_KICKED, admin_encode_conn_kick, &kick);
	reply = cJSON_CreateObject();
	admin_add_conn_id(reply, kick.conn_id);
	kicked = cJSON_AddArrayToObject(reply, ADMIN_F_KICKED);
	unanswered = cJSON_AddArrayToObject(reply, ADMIN_F_UNANSWERED);
	admin_kick_collect(a->s, kicked, unanswered);
	workask_end(&a->s->ask);
	if (cJSON_GetArraySize(kicked) == 0) {
		int silent = cJSON_GetArraySize(unanswered);

		cJSON_Delete(reply);
		return admin__error("kick: no open connection %llu%s", (unsigned long long)kick.conn_id,
				    silent ? " on the workers that answered" : "");
	}
	return reply;
}
