/*
 * http.h - plain HTTP on the relay's port (service thread).
 *
 *   GET with Accept: application/nostr+json   the NIP-11 document
 *   GET / with Accept: text/html              the status page
 *   GET /stats.json                           live figures for that page
 *   GET /metrics                              Prometheus text for the whole
 *                                             relay (loopback clients only
 *                                             unless metrics_public = 1)
 *   OPTIONS                                   CORS preflight
 * Every answer carries the CORS headers NIP-11 asks for.  The body is
 * copied into the session at request time and written from the WRITEABLE
 * callback.
 */
#ifndef RELAYD_HTTP_H
#define RELAYD_HTTP_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/buf.h"

struct relayd;

/* Per-HTTP-transaction state kept in the lws session. */
struct http_session {
	char *body;          /* the answer's body, owned */
	size_t len;
	unsigned status;
	const char *type;
	bool headers_sent;   /* otherwise the next WRITEABLE sends them first */
	/* A POST being received (NIP-86): */
	struct buf post;
	bool collecting, post_too_big;
	unsigned refusal;    /* status to answer once the body is in, or 0 */
};

/* Answers s later from the WRITEABLE callback (headers, then body); body
 * is copied.  For answers that are not ready when the request arrives. */
void http_respond(struct lws *wsi, struct http_session *s, unsigned status, const char *type,
		  const char *body, size_t len);

/* LWS_CALLBACK_HTTP: picks the answer, writes the headers, asks to write. */
int http_on_request(struct relayd *r, struct lws *wsi, struct http_session *s);
/* LWS_CALLBACK_HTTP_WRITEABLE: writes the body, ends the transaction. */
int http_on_writable(struct lws *wsi, struct http_session *s);
/* The session ends: frees what it holds. */
void http_on_close(struct relayd *r, struct http_session *s);

#endif
