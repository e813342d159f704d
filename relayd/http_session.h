/*
 * http_session.h - one HTTP transaction's state (service thread).
 *
 * libwebsockets keeps one per HTTP connection in its session storage.
 * http.c writes the answer from it; nip86.c collects a POST's body in it
 * and answers later, when stored has.
 */
#ifndef RELAYD_HTTP_SESSION_H
#define RELAYD_HTTP_SESSION_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/buf.h"

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

/* Answers s from the next WRITEABLE callback of wsi: headers, then body.
 * body (len bytes) is copied; type is borrowed and must be static.  Without
 * memory the answer becomes a 500 with no body.  For answers that are not
 * ready when the request arrives. */
void http_session_respond(struct lws *wsi, struct http_session *s, unsigned status,
			  const char *type, const char *body, size_t len);

#endif
