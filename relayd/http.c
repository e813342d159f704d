/* http.c - the HTTP routes of a worker (see http.h). */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nip11.h"
#include "nip86.h"
#include "realip.h"
#include "relayd.h"
#include "status_page.h"

struct http_answer {
	unsigned status;
	const char *type;
	char *body; /* owned */
	size_t len;
};

static const char http_plain_page[] =
	"This is a Nostr relay. Connect with a Nostr client over websocket.\n";

static int http_header_has(struct lws *wsi, enum lws_token_indexes h, const char *needle)
{
	char value[256];

	if (lws_hdr_copy(wsi, value, sizeof(value), h) <= 0)
		return 0;
	/* Media types and the header values looked for here are
	 * case-insensitive (RFC 9110): Application/Nostr+JSON is the same. */
	return strcasestr(value, needle) != NULL;
}

static void http_set(struct http_answer *a, unsigned status, const char *type, const char *body,
		     size_t len)
{
	a->status = status;
	a->type = type;
	a->body = malloc(len + 1);
	a->len = a->body ? len : 0;
	if (a->body)
		memcpy(a->body, body, len);
}

/* Behind a trusted proxy the forwarded client is judged (realip.h). */
static int http_peer_is_loopback(struct relayd *r, struct lws *wsi)
{
	char ip[64] = "";

	realip_conn_address(relayd_cfg(r), wsi, ip, sizeof(ip));
	return strncmp(ip, "127.", 4) == 0 || strcmp(ip, "::1") == 0 ||
	       strncmp(ip, "::ffff:127.", 11) == 0;
}

static void http_metrics(struct relayd *r, struct lws *wsi, struct http_answer *a)
{
	static const char waiting[] = "# stored has not published metrics yet\n";
	static const char forbidden[] = "metrics are only served to loopback clients\n";

	if (!relayd_cfg(r)->metrics_public && !http_peer_is_loopback(r, wsi))
		http_set(a, HTTP_STATUS_FORBIDDEN, "text/plain", forbidden, sizeof(forbidden) - 1);
	else if (r->metrics_text.len)
		http_set(a, HTTP_STATUS_OK, "text/plain; version=0.0.4", r->metrics_text.data,
			 r->metrics_text.len);
	else
		http_set(a, HTTP_STATUS_OK, "text/plain; version=0.0.4", waiting, sizeof(waiting) - 1);
}

static void http_route(struct relayd *r, struct lws *wsi, const char *path, struct http_answer *a)
{
	if (http_header_has(wsi, WSI_TOKEN_HTTP_ACCEPT, "application/nostr+json")) {
		http_set(a, HTTP_STATUS_OK, "application/nostr+json", r->nip11, r->nip11_len);
	} else if (strcmp(path, "/metrics") == 0) {
		http_metrics(r, wsi, a);
	} else if (strcmp(path, "/stats.json") == 0) {
		const char *json = r->stats_json.len ? r->stats_json.data : "{}";

		http_set(a, HTTP_STATUS_OK, "application/json", json, strlen(json));
	} else if (strcmp(path, "/") != 0) {
		http_set(a, HTTP_STATUS_NOT_FOUND, "text/plain", "not found\n", 10);
	} else if (http_header_has(wsi, WSI_TOKEN_HTTP_ACCEPT, "text/html")) {
		a->status = HTTP_STATUS_OK;
		a->type = "text/html; charset=utf-8";
		a->body = status_page_render(r->nip11, relayd_cfg(r)->relay_url, &a->len);
	} else {
		http_set(a, HTTP_STATUS_OK, "text/plain", http_plain_page, sizeof(http_plain_page) - 1);
	}
}

static int http_cors(struct lws *wsi, unsigned char **p, unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)"access-control-allow-origin:",
					   (const unsigned char *)"*", 1, p, end) ||
	       lws_add_http_header_by_name(wsi, (const unsigned char *)"access-control-allow-headers:",
					   (const unsigned char *)"*", 1, p, end) ||
	       lws_add_http_header_by_name(wsi, (const unsigned char *)"access-control-allow-methods:",
					   (const unsigned char *)"GET, POST, OPTIONS", 18, p, end);
}

static int http_write_headers(struct lws *wsi, struct http_session *s)
{
	unsigned char headers[LWS_PRE + 1024], *start = headers + LWS_PRE, *p = start;
	unsigned char *end = headers + sizeof(headers) - 1;
	const struct relayd *r = lws_context_user(lws_get_context(wsi));
	char worker[16];
	int n = snprintf(worker, sizeof(worker), "%d", r->instance);

	s->headers_sent = true;
	if (lws_add_http_common_headers(wsi, s->status, s->type, s->len, &p, end))
		return 1;
	/* A client that asked to close must be told the connection closes,
	 * or it may send its next request into the closing socket. */
	if (http_header_has(wsi, WSI_TOKEN_CONNECTION, "close") &&
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"connection:",
					(const unsigned char *)"close", 5, &p, end))
		return 1;
	return http_cors(wsi, &p, end) ||
	       lws_add_http_header_by_name(wsi, (const unsigned char *)"x-relay-worker:",
					   (const unsigned char *)worker, n, &p, end) ||
	       lws_finalize_write_http_header(wsi, start, &p, end);
}

static struct relayd *http_relayd(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

/* Ends a transaction.  libwebsockets frees the session's memory when a
 * transaction completes (a kept-alive connection gets a fresh one), so what
 * the session holds is released first. */
static int http_complete(struct relayd *r, struct lws *wsi, struct http_session *s)
{
	http_on_close(r, s);
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* HEAD (RFC 9110 9.3.2): the headers GET would get, Content-Length too,
 * and no body; uptime monitors ask this way. */
static int http_on_head(struct relayd *r, struct lws *wsi, struct http_session *s)
{
	struct http_answer a;
	char path[256] = "/";

	lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_HEAD_URI);
	http_route(r, wsi, path, &a);
	if (!a.body)
		return 1;
	s->status = a.status;
	s->type = a.type;
	s->len = a.len;
	free(a.body);
	if (http_write_headers(wsi, s))
		return 1;
	return http_complete(r, wsi, s);
}

int http_on_request(struct relayd *r, struct lws *wsi, struct http_session *s)
{
	struct http_answer a = { HTTP_STATUS_NO_CONTENT, "text/plain", NULL, 0 };
	char path[256] = "/";

	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
		return nip86_on_request(r, wsi, s);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0)
		return http_on_head(r, wsi, s);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI) <= 0) {
		lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI);
		http_route(r, wsi, path, &a);
		if (!a.body)
			return 1;
	}
	s->body = a.body;
	s->len = a.len;
	s->status = a.status;
	s->type = a.type;
	if (http_write_headers(wsi, s))
		return 1;
	if (a.len == 0)
		return http_complete(http_relayd(wsi), wsi, s);
	lws_callback_on_writable(wsi);
	return 0;
}

void http_on_body(struct http_session *s, const void *in, size_t len)
{
	nip86_on_body(s, in, len);
}

int http_on_body_done(struct relayd *r, struct lws *wsi, struct http_session *s)
{
	return nip86_on_body_done(r, wsi, s);
}

int http_on_writable(struct lws *wsi, struct http_session *s)
{
	unsigned char *out;
	int n;

	if (!s->headers_sent && s->type) {
		if (http_write_headers(wsi, s))
			return 1;
		if (s->len == 0)
			return http_complete(http_relayd(wsi), wsi, s);
		lws_callback_on_writable(wsi);
		return 0;
	}
	if (!s->body)
		return 0;
	out = malloc(LWS_PRE + s->len);
	if (!out)
		return 1;
	memcpy(out + LWS_PRE, s->body, s->len);
	n = lws_write(wsi, out + LWS_PRE, s->len, LWS_WRITE_HTTP_FINAL);
	free(out);
	free(s->body);
	s->body = NULL;
	s->len = 0;
	s->type = NULL;
	if (n < 0)
		return 1;
	return http_complete(http_relayd(wsi), wsi, s);
}

void http_on_close(struct relayd *r, struct http_session *s)
{
	nip86_forget(r, s);
	free(s->body);
	s->body = NULL;
	s->len = 0;
	s->type = NULL;
	buf_free(&s->post);
}
