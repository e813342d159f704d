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

#include "http_session.h"

struct relayd;

/* The http_on_* functions return what the lws callback returns: 0 to go
 * on, non-zero to close the connection. */

/* LWS_CALLBACK_HTTP: picks the answer, writes the headers, asks to write. */
int http_on_request(struct relayd *r, struct lws *wsi, struct http_session *s);
/* LWS_CALLBACK_HTTP_BODY: a piece of a POST's body (nip86.h). */
void http_on_body(struct http_session *s, const void *in, size_t len);
/* LWS_CALLBACK_HTTP_BODY_COMPLETION: the POST's body is complete. */
int http_on_body_done(struct relayd *r, struct lws *wsi, struct http_session *s);
/* LWS_CALLBACK_HTTP_WRITEABLE: writes the body, ends the transaction. */
int http_on_writable(struct lws *wsi, struct http_session *s);
/* The transaction ends (LWS_CALLBACK_CLOSED_HTTP, or it completed): frees
 * what s holds and drops a NIP-86 answer still to come for it. */
void http_on_close(struct relayd *r, struct http_session *s);

#endif
