/* nip86.c - NIP-86 over HTTP POST, forwarded to stored (see nip86.h). */
#include "nip86.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/deadline.h"
#include "../common/event_sig.h"
#include "../proto/msg.h"
#include "http_session.h"
#include "link.h"
#include "nip98.h"
#include "relayd.h"

/* A request waiting for stored's answer. */
struct manage_pending {
	uint32_t request_id;
	struct lws *wsi;
	struct http_session *s; /* NULL: slot free */
	int64_t deadline_ms;
};

/* The service thread's NIP-86 state. */
struct nip86 {
	struct manage_pending manage[NIP86_MAX_PENDING];
	struct sig_verifier *verifier; /* NIP-98 checks */
};

struct nip86 *nip86_new(void)
{
	struct nip86 *n = calloc(1, sizeof(*n));

	if (n && !(n->verifier = sig_verifier_new())) {
		free(n);
		n = NULL;
	}
	return n;
}

void nip86_free(struct nip86 *n)
{
	if (!n)
		return;
	sig_verifier_free(n->verifier);
	free(n);
}

static void nip86_error(struct lws *wsi, struct http_session *s, unsigned status,
			const char *message)
{
	char body[256];
	int n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}", message);

	http_session_respond(wsi, s, status, "application/json", body, (size_t)n);
}

int nip86_on_request(struct relayd *r, struct lws *wsi, struct http_session *s)
{
	char type[128] = "";

	lws_hdr_copy(wsi, type, sizeof(type), WSI_TOKEN_HTTP_CONTENT_TYPE);
	buf_reset(&s->post);
	s->post_too_big = false;
	s->collecting = true;
	if (!relayd_cfg(r)->admin_pubkeys[0])
		s->refusal = HTTP_STATUS_NOT_FOUND;
	else if (!strstr(type, "application/nostr+json+rpc"))
		s->refusal = HTTP_STATUS_UNSUPPORTED_MEDIA_TYPE;
	else
		s->refusal = 0;
	return 0; /* answered once the body is in */
}

void nip86_on_body(struct http_session *s, const void *in, size_t len)
{
	if (s->post_too_big || s->post.len + len > NIP86_MAX_BODY) {
		s->post_too_big = true;
		return;
	}
	buf_append(&s->post, in, len);
}

static int nip86_pending_add(struct relayd *r, uint32_t request_id, struct lws *wsi,
			     struct http_session *s)
{
	for (int i = 0; i < NIP86_MAX_PENDING; i++) {
		if (r->nip86->manage[i].s)
			continue;
		r->nip86->manage[i] = (struct manage_pending){ request_id, wsi, s,
							deadline_now_ms() + NIP86_TIMEOUT_MS };
		return 0;
	}
	return -1;
}

static int nip86_forward(struct relayd *r, struct lws *wsi, struct http_session *s,
			 const uint8_t pubkey[32])
{
	uint32_t request_id = link_request_id(r);
	struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
	struct msg_manage m = { .request = { s->post.data ? s->post.data : "", (uint32_t)s->post.len } };
	struct buf out = BUF_INIT;
	int rc;

	memcpy(m.pubkey, pubkey, 32);
	if (nip86_pending_add(r, request_id, wsi, s)) {
		nip86_error(wsi, s, HTTP_STATUS_SERVICE_UNAVAILABLE, "too many management requests");
		return 0;
	}
	rc = msg_encode_manage(&out, &h, &m) || link_send(r, request_id, out.data, out.len);
	buf_free(&out);
	if (rc) {
		nip86_forget(r, s);
		nip86_error(wsi, s, HTTP_STATUS_SERVICE_UNAVAILABLE, "storage is unavailable");
	}
	return 0;
}

int nip86_on_body_done(struct relayd *r, struct lws *wsi, struct http_session *s)
{
	char header[8192] = "";
	uint8_t pubkey[32];
	const char *why;

	s->collecting = false;
	if (s->refusal == HTTP_STATUS_NOT_FOUND) {
		nip86_error(wsi, s, s->refusal, "the management API is not enabled");
		return 0;
	}
	if (s->refusal) {
		nip86_error(wsi, s, s->refusal, "use Content-Type: application/nostr+json+rpc");
		return 0;
	}
	if (s->post_too_big) {
		nip86_error(wsi, s, HTTP_STATUS_REQ_ENTITY_TOO_LARGE, "request too large");
		return 0;
	}
	lws_hdr_copy(wsi, header, sizeof(header), WSI_TOKEN_HTTP_AUTHORIZATION);
	why = nip98_check(r, r->nip86->verifier, header, s->post.data ? s->post.data : "",
			  s->post.len, pubkey);
	if (why) {
		nip86_error(wsi, s, HTTP_STATUS_UNAUTHORIZED, why);
		return 0;
	}
	return nip86_forward(r, wsi, s, pubkey);
}

void nip86_on_result(struct relayd *r, uint32_t request_id, const char *response, size_t len)
{
	for (int i = 0; i < NIP86_MAX_PENDING; i++) {
		struct manage_pending *p = &r->nip86->manage[i];

		if (p->s && p->request_id == request_id) {
			http_session_respond(p->wsi, p->s, HTTP_STATUS_OK, "application/json", response,
					     len);
			p->s = NULL;
			return;
		}
	}
}

void nip86_forget(struct relayd *r, struct http_session *s)
{
	for (int i = 0; i < NIP86_MAX_PENDING; i++)
		if (r->nip86->manage[i].s == s)
			r->nip86->manage[i].s = NULL;
}

void nip86_expire(struct relayd *r, int64_t now_ms)
{
	for (int i = 0; i < NIP86_MAX_PENDING; i++) {
		struct manage_pending *p = &r->nip86->manage[i];

		if (p->s && p->deadline_ms <= now_ms) {
			nip86_error(p->wsi, p->s, HTTP_STATUS_GATEWAY_TIMEOUT, "storage did not answer");
			p->s = NULL;
		}
	}
}
