/*
 * ws_recv.c - what a client connection does with the bytes it receives:
 * checks the handshake response, then decodes frames, joins fragments,
 * delivers messages, answers pings and completes the close handshake.
 */
#include <string.h>

#include "err.h"
#include "ws_conn_int.h"
#include "ws_frame.h"

/* Handles the 101 response once it is complete; returns bytes consumed. */
static size_t ws_recv_handshake(struct ws_conn *c)
{
	size_t head = ws_handshake_head_len(c->in.data, c->in.len);
	int deflate = 0;

	if (!head)
		return 0;
	if (ws_handshake_check(c->in.data, head, c->key, &c->worker, &deflate) ||
	    (deflate && !c->loop->z)) {
		ws__teardown(c, ERR_INVAL);
		return head;
	}
	c->deflate = deflate;
	c->state = WS_OPEN;
	if (c->h->on_open)
		c->h->on_open(c, c->ud);
	return head;
}

static void ws_deliver(struct ws_conn *c, const uint8_t *data, size_t len, bool compressed)
{
	struct ws_loop *l = c->loop;
	int rc;

	if (compressed) {
		rc = ws_z_inflate(l->z, data, len, l->max_message, &l->zbuf);
		if (rc) {
			ws__teardown(c, rc);
			return;
		}
		data = (const uint8_t *)l->zbuf.data;
		len = l->zbuf.len;
	}
	if (c->state == WS_OPEN && c->h->on_message)
		c->h->on_message(c, (const char *)data, len, c->ud);
}

/* A data frame (text, binary or continuation). */
static void ws_recv_data(struct ws_conn *c, const struct ws_frame *f)
{
	if (f->opcode != WS_OP_CONT && c->msg_op >= 0) {
		ws__teardown(c, ERR_INVAL); /* a new message inside a fragmented one */
		return;
	}
	if (f->opcode == WS_OP_CONT && c->msg_op < 0) {
		ws__teardown(c, ERR_INVAL); /* a continuation of nothing */
		return;
	}
	if (f->opcode == WS_OP_CONT && f->rsv1) {
		ws__teardown(c, ERR_INVAL); /* RFC 7692 6.1: RSV1 on the first frame only */
		return;
	}
	if (f->opcode != WS_OP_CONT && f->fin) {
		ws_deliver(c, f->payload, f->len, f->rsv1);
		return;
	}
	if (c->msg.len + f->len > c->loop->max_message) {
		ws__teardown(c, ERR_TOOBIG);
		return;
	}
	if (f->opcode != WS_OP_CONT) {
		c->msg_op = f->opcode;
		c->msg_z = f->rsv1;
	}
	if (buf_append(&c->msg, f->payload, f->len)) {
		ws__teardown(c, ERR_NOMEM);
		return;
	}
	if (f->fin) {
		c->msg_op = -1;
		ws_deliver(c, (const uint8_t *)c->msg.data, c->msg.len, c->msg_z);
		buf_reset(&c->msg);
	}
}

/* The server's close: echo its status if we had not closed, then end. */
static void ws_recv_close(struct ws_conn *c, const struct ws_frame *f)
{
	if (c->state == WS_OPEN) {
		struct iovec iov = { (void *)f->payload, f->len >= 2 ? 2 : 0 };

		ws__queue(c, WS_OP_CLOSE, &iov, 1);
		ws_flush(c);
	}
	if (c->state != WS_DEAD)
		ws__teardown(c, 0);
}

static void ws_recv_frame(struct ws_conn *c, const struct ws_frame *f)
{
	struct iovec iov = { (void *)f->payload, f->len };

	switch (f->opcode) {
	case WS_OP_PING:
		if (c->state == WS_OPEN)
			ws__queue(c, WS_OP_PONG, &iov, 1);
		break;
	case WS_OP_PONG:
		break;
	case WS_OP_CLOSE:
		ws_recv_close(c, f);
		break;
	default:
		ws_recv_data(c, f);
		break;
	}
}

/* Decodes the frames in c->in; returns bytes consumed. */
static size_t ws_recv_frames(struct ws_conn *c, size_t off)
{
	const uint8_t *base = (const uint8_t *)c->in.data;
	struct ws_frame f;
	int rc;

	while (c->state == WS_OPEN || c->state == WS_CLOSING) {
		rc = ws_frame_decode_ext(base + off, c->in.len - off, c->loop->max_message,
					 c->deflate, &f);
		if (rc < 0)
			ws__teardown(c, rc);
		if (rc <= 0)
			break;
		off += f.frame_len;
		ws_recv_frame(c, &f);
	}
	return off;
}

void ws__recv(struct ws_conn *c)
{
	size_t off = 0;

	if (c->state == WS_HANDSHAKE || c->state == WS_CONNECTING)
		off = ws_recv_handshake(c);
	if (c->state == WS_OPEN || c->state == WS_CLOSING)
		off = ws_recv_frames(c, off);
	if (c->state == WS_DEAD || off == 0)
		return;
	memmove(c->in.data, c->in.data + off, c->in.len - off);
	c->in.len -= off;
	c->in.data[c->in.len] = '\0';
}
