/* send.c - outgoing frames, one lws_write per WRITEABLE (see send.h). */
#include "send.h"

#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/log.h"
#include "conn.h"
#include "outq.h"
#include "relayd.h"

int send_frame(struct relayd *r, struct conn *c, char *head, size_t head_len,
	       struct shared *body, char tail)
{
	if (c->closing) {
		free(head);
		shared_unref(body);
		return ERR_FULL;
	}
	if (outq_push(&c->out, head, head_len, body, tail))
		return ERR_NOMEM;
	if (c->out.bytes > relayd_cfg(r)->max_outbound_bytes) {
		log_info("closing %s: %zu bytes queued and not read", c->ip, c->out.bytes);
		c->closing = true;
		outq_clear(&c->out);
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		return ERR_FULL;
	}
	lws_callback_on_writable(c->wsi);
	return 0;
}

int send_writable(struct relayd *r, struct conn *c)
{
	struct out_item *item;
	unsigned char *frame;
	size_t len;
	int n;

	if (c->closing)
		return -1;
	item = outq_pop(&c->out);
	if (!item)
		return 0;
	len = out_item_size(item);
	frame = conn_scratch(r->conns, LWS_PRE + len);
	if (!frame) {
		out_item_free(item);
		return -1;
	}
	memcpy(frame + LWS_PRE, item->head, item->head_len);
	if (item->body)
		memcpy(frame + LWS_PRE + item->head_len, item->body->data, item->body->len);
	if (item->tail)
		frame[LWS_PRE + len - 1] = (unsigned char)item->tail;
	out_item_free(item);
	n = lws_write(c->wsi, frame + LWS_PRE, len, LWS_WRITE_TEXT);
	if (n < (int)len)
		return -1;
	atomic_fetch_add(&r->stats.messages_out, 1);
	if (c->out.first)
		lws_callback_on_writable(c->wsi);
	return 0;
}
