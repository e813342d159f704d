/* manage.c - NIP-86 requests from workers to the admin thread (see manage.h). */
#include "manage.h"

#include <cjson/cJSON.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "stored.h"
#include "reply.h"

/* The admin thread may wait up to a minute for the writer. */
#define MANAGE_TIMEOUT_MS 70000

struct manage_call {
	struct stored *s;
	struct rpc_return to;
	nng_ctx ctx;
	nng_aio *aio;
	int receiving;
};

static void manage_answer(struct manage_call *c, const char *json, size_t len)
{
	struct msg_header h = msg_header_for(c->to.worker, c->to.request_id);
	struct msg_manage_result r = { { json, (uint32_t)len } };
	struct buf out = BUF_INIT;

	if (msg_encode_manage_result(&out, &h, &r) == 0)
		reply_send(c->s, &c->to, out.data, out.len);
	buf_free(&out);
}

/* Runs inside the aio's own callback, where nng_aio_free() would wait for
 * the callback itself: nng_aio_reap() frees it from another thread. */
static void manage_finish(struct manage_call *c)
{
	nng_ctx_close(c->ctx);
	nng_aio_reap(c->aio);
	free(c);
}

/* Runs on an nng thread: first when the request was sent, then when the
 * answer arrived (or either failed). */
static void manage_callback(void *arg)
{
	static const char failed[] = "{\"error\":\"the management request failed\"}";
	struct manage_call *c = arg;
	nng_msg *msg;

	if (nng_aio_result(c->aio)) {
		if (!c->receiving)
			nng_msg_free(nng_aio_get_msg(c->aio));
		manage_answer(c, failed, sizeof(failed) - 1);
		manage_finish(c);
		return;
	}
	if (!c->receiving) {
		c->receiving = 1;
		nng_ctx_recv(c->ctx, c->aio);
		return;
	}
	msg = nng_aio_get_msg(c->aio);
	manage_answer(c, nng_msg_body(msg), nng_msg_len(msg));
	nng_msg_free(msg);
	manage_finish(c);
}

/* {"cmd":"nip86","by":"<admin pubkey>","request":"<the HTTP body>"}: the
 * body travels as a string; the admin thread parses it, not this one. */
static char *manage_request_json(const struct msg_manage *m)
{
	char hex[65], *body = malloc((size_t)m->request.len + 1), *text;
	cJSON *o;

	if (!body)
		return NULL;
	memcpy(body, m->request.ptr, m->request.len);
	body[m->request.len] = '\0';
	hex_encode(m->pubkey, 32, hex);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "cmd", "nip86");
	cJSON_AddStringToObject(o, "by", hex);
	cJSON_AddStringToObject(o, "request", body);
	text = json_print(o, false);
	cJSON_Delete(o);
	free(body);
	return text;
}

void manage_forward(struct stored *s, const struct rpc_return *to, const struct msg_manage *m)
{
	struct manage_call *c = calloc(1, sizeof(*c));
	char *json = manage_request_json(m);
	nng_msg *msg = NULL;

	if (!c || !json || nng_ctx_open(&c->ctx, s->manage_req)) {
		free(c);
		free(json);
		return; /* the worker answers 504 after its timeout */
	}
	c->s = s;
	c->to = *to;
	if (nng_aio_alloc(&c->aio, manage_callback, c) || nng_msg_alloc(&msg, 0) ||
	    nng_msg_append(msg, json, strlen(json))) {
		nng_msg_free(msg);
		nng_ctx_close(c->ctx);
		nng_aio_free(c->aio);
		free(c);
		free(json);
		return;
	}
	free(json);
	nng_aio_set_timeout(c->aio, MANAGE_TIMEOUT_MS);
	nng_aio_set_msg(c->aio, msg);
	nng_ctx_send(c->ctx, c->aio);
}

int manage_open(struct stored *s)
{
	char url[256];

	config_socket_url(&s->cfg, "stored-admin.ipc", url, sizeof(url));
	if (nng_req0_open(&s->manage_req))
		return ERR_NNG;
	/* Never send a request twice: NIP-86 changes are not all idempotent. */
	nng_socket_set_ms(s->manage_req, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	return nng_dial(s->manage_req, url, NULL, NNG_FLAG_NONBLOCK) ? ERR_NNG : 0;
}

void manage_close(struct stored *s)
{
	nng_close(s->manage_req);
}
