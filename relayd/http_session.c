/* http_session.c - one HTTP transaction's state (see http_session.h). */
#include "http_session.h"

#include <stdlib.h>
#include <string.h>

void http_session_respond(struct lws *wsi, struct http_session *s, unsigned status,
			  const char *type, const char *body, size_t len)
{
	free(s->body);
	s->body = malloc(len + 1);
	s->len = s->body ? len : 0;
	if (s->body)
		memcpy(s->body, body, len);
	s->status = s->body ? status : HTTP_STATUS_INTERNAL_SERVER_ERROR;
	s->type = type;
	s->headers_sent = false;
	lws_callback_on_writable(wsi);
}
