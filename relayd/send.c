/* send.c - outgoing frames, several per write (see send.h). */
#include "send.h"

#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/log.h"
#include "conn.h"
#include "outq.h"
#include "pmdz.h"
#include "relayd.h"
#include "wsframe.h"

/* Bytes framed per write: enough for a burst of deliveries, small enough
 * that one connection does not hold the service thread for long. */
#define SEND_BATCH_BYTES (64 * 1024)

/* Connections given frames while the mailbox is drained, written once the
 * drain is done; ids, since a connection may close meanwhile. */
struct send_batch {
	bool holding; /* between send_hold() and send_flush() */
	uint64_t *ids;
	size_t n, cap;
};

struct send_batch *send_batch_new(void)
{
	return calloc(1, sizeof(struct send_batch));
}

void send_batch_free(struct send_batch *b)
{
	if (b)
		free(b->ids);
	free(b);
}

void send_hold(struct relayd *r)
{
	r->send->holding = true;
}

/* How long a Close frame may wait for the socket to take it. */
#define SEND_CLOSE_SECS 5

void send_close(struct conn *c, enum lws_close_status status, const char *reason)
{
	size_t len = strlen(reason);

	if (!conn_set_closing(c))
		return;
	if (status == LWS_CLOSE_STATUS_NOSTATUS) {
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		return;
	}
	/* A WRITEABLE callback returning -1 (send_writable) has lws send the
	 * Close frame prepared here; the timeout covers a client that never
	 * reads it. */
	lws_close_reason(c->wsi, status, (unsigned char *)reason, len < 123 ? len : 123);
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND, SEND_CLOSE_SECS);
	lws_callback_on_writable(c->wsi);
}

/* Whether lws began closing c for a protocol error (its Close frame is
 * prepared or sent, RFC 6455 7.1.7).  Then c is marked closing, so that
 * nothing queued meanwhile goes out after that Close. */
static bool send_lws_closing(struct conn *c)
{
	if (lws_get_close_length(c->wsi) == 0)
		return false;
	conn_set_closing(c);
	return true;
}

/* Lists c for send_flush(); ERR_NOMEM leaves it to a WRITEABLE callback. */
static int send_list(struct send_batch *b, struct conn *c)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		uint64_t *grown = realloc(b->ids, cap * sizeof(*grown));

		if (!grown)
			return ERR_NOMEM;
		b->ids = grown;
		b->cap = cap;
	}
	b->ids[b->n++] = c->id;
	c->flush_listed = true;
	return 0;
}

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
		send_close(c, LWS_CLOSE_STATUS_NOSTATUS, "");
		return ERR_FULL;
	}
	if (r->send->holding && (c->flush_listed || send_list(r->send, c) == 0))
		return 0;
	lws_callback_on_writable(c->wsi);
	return 0;
}

void send_flush(struct relayd *r)
{
	struct send_batch *b = r->send;

	b->holding = false;
	for (size_t i = 0; i < b->n; i++) {
		struct conn *c = conn_find(r->conns, b->ids[i]);

		if (!c)
			continue;
		c->flush_listed = false;
		if (c->closing || !c->out.first)
			continue;
		/* What lws kept of an earlier short write goes first, from
		 * its own WRITEABLE handling. */
		if (lws_partial_buffered(c->wsi)) {
			lws_callback_on_writable(c->wsi);
		} else if (send_writable(r, c) < 0) {
			send_close(c, LWS_CLOSE_STATUS_NOSTATUS, "");
		}
	}
	b->n = 0;
}

/* Frames item at p; returns the bytes written. */
static size_t send_put_item(unsigned char *p, const struct out_item *item)
{
	size_t len = out_item_size(item);
	size_t at = wsframe_text_header(p, len);

	memcpy(p + at, item->head, item->head_len);
	at += item->head_len;
	if (item->body) {
		memcpy(p + at, item->body->data, item->body->len);
		at += item->body->len;
	}
	if (item->tail)
		p[at++] = (unsigned char)item->tail;
	return at;
}

/*
 * permessage-deflate (RFC 7692), without context takeover: each message is
 * compressed on its own.  A live event goes to a subscription as a stored
 * (uncompressed) block holding `["EVENT","<subid>",`, then the event and
 * `]` deflated once for all recipients and kept with the shared body: the
 * per-recipient part costs 5 bytes and no zlib call.  A message shorter
 * than ws_deflate_min_bytes, or that would not shrink, goes as it is
 * (RSV1 clear).
 */
enum send_form {
	SEND_RAW,     /* as it is */
	SEND_ZSHARED, /* stored-block head, then the body's shared deflate */
	SEND_ZSELF,   /* deflated here, alone (no shared body) */
};

/* Deflates body's JSON and tail, once for every recipient of it. */
static void send_shared_z(struct relayd *r, struct shared *body, char tail)
{
	size_t raw = (size_t)body->len + (tail ? 1 : 0), n;
	unsigned char *z, *fit;

	if (body->zstate)
		return;
	body->zstate = 2;
	/* Room for raw - 1 bytes and a sync flush: a result that is not
	 * shorter than raw is not worth sending (ERR_FULL). */
	z = malloc(raw + 4);
	if (!z)
		return;
	if (pmdz_compress(r->pmdz, body->data, body->len, &tail, tail ? 1 : 0, z, raw + 4, &n)) {
		free(z);
		return;
	}
	fit = realloc(z, n ? n : 1);
	body->z = fit ? fit : z;
	body->zlen = (uint32_t)n;
	body->ztail = tail;
	body->zstate = 1;
}

/* How item goes to c; min is ws_deflate_min_bytes. */
static enum send_form send_form_of(struct relayd *r, const struct conn *c, const struct out_item *it,
				   size_t min)
{
	size_t raw = out_item_size(it);

	if (!c->deflate || raw < min)
		return SEND_RAW;
	if (!it->body)
		return SEND_ZSELF;
	if (it->head_len > PMDZ_STORED_MAX)
		return SEND_RAW;
	send_shared_z(r, it->body, it->tail);
	if (it->body->zstate != 1 || it->body->ztail != it->tail)
		return SEND_RAW;
	return PMDZ_STORED_HEAD + it->head_len + it->body->zlen < raw ? SEND_ZSHARED : SEND_RAW;
}

/* The most bytes item takes framed in form f. */
static size_t send_room(const struct out_item *it, enum send_form f)
{
	switch (f) {
	case SEND_ZSHARED:
		return WSFRAME_HEADER_MAX + PMDZ_STORED_HEAD + it->head_len + it->body->zlen;
	case SEND_ZSELF:
		return WSFRAME_HEADER_MAX + out_item_size(it) + 4; /* pmdz_compress's cap */
	default:
		return WSFRAME_HEADER_MAX + out_item_size(it);
	}
}

/* Frames item at p as a stored block of its head and the shared deflate
 * of its body; returns the bytes written. */
static size_t send_put_zshared(unsigned char *p, const struct out_item *item)
{
	size_t len = PMDZ_STORED_HEAD + item->head_len + item->body->zlen;
	size_t at = wsframe_header(p, len, true);

	pmdz_stored_header(p + at, item->head_len);
	at += PMDZ_STORED_HEAD;
	memcpy(p + at, item->head, item->head_len);
	at += item->head_len;
	memcpy(p + at, item->body->z, item->body->zlen);
	return at + item->body->zlen;
}

/* Frames item (no body) at p deflated, or as it is when that does not
 * make it shorter; returns the bytes written. */
static size_t send_put_zself(struct relayd *r, unsigned char *p, const struct out_item *item)
{
	unsigned char h[WSFRAME_HEADER_MAX];
	size_t raw = out_item_size(item), n, hl;
	char tail = item->tail;

	if (pmdz_compress(r->pmdz, item->head, item->head_len, &tail, tail ? 1 : 0,
			  p + WSFRAME_HEADER_MAX, raw + 4, &n))
		return send_put_item(p, item);
	hl = wsframe_header(h, n, true);
	memmove(p + hl, p + WSFRAME_HEADER_MAX, n);
	memcpy(p, h, hl);
	return hl + n;
}

/* Frames item at p in form f; returns the bytes written. */
static size_t send_put(struct relayd *r, unsigned char *p, const struct out_item *item,
		       enum send_form f)
{
	switch (f) {
	case SEND_ZSHARED: return send_put_zshared(p, item);
	case SEND_ZSELF: return send_put_zself(r, p, item);
	default: return send_put_item(p, item);
	}
}

/* An unmasked ping with a one-byte payload (RFC 6455 5.5.2): lws hides
 * an empty pong from the callback, so the client must echo something. */
#define SEND_PING_BYTES 3

/* Frames a keepalive ping at p; returns the bytes written. */
static size_t send_put_ping(unsigned char *p)
{
	p[0] = 0x89; /* FIN, opcode 9 */
	p[1] = 1;
	p[2] = 'k';
	return SEND_PING_BYTES;
}

/*
 * Writes as many queued messages as fit in SEND_BATCH_BYTES (at least one)
 * with one write: each is framed here and the frames go out as raw bytes,
 * because a fan-out of many small EVENTs costs one syscall per lws_write
 * and syscalls dominated the fan-out profile (bench/RESULTS.md).  A short
 * write is kept and finished by libwebsockets before the next WRITEABLE.
 * A keepalive ping that is due goes first (keepalive.h).
 */
int send_writable(struct relayd *r, struct conn *c)
{
	unsigned char *frame;
	size_t total = 0, used = 0, n_items = 0;
	size_t min = c->deflate ? relayd_cfg(r)->ws_deflate_min_bytes : 0;
	int n;

	if (c->closing)
		return -1;
	if (send_lws_closing(c))
		return 0;
	if (c->ping_due)
		total = SEND_PING_BYTES;
	for (struct out_item *it = c->out.first; it; it = it->next) {
		size_t size = send_room(it, send_form_of(r, c, it, min));

		if (n_items && total + size > SEND_BATCH_BYTES)
			break;
		total += size;
		n_items++;
	}
	if (!total)
		return 0;
	frame = conn_scratch(r->conns, LWS_PRE + total);
	if (!frame)
		return -1;
	if (c->ping_due)
		used = send_put_ping(frame + LWS_PRE);
	for (size_t i = 0; i < n_items; i++) {
		struct out_item *item = outq_pop(&c->out);

		used += send_put(r, frame + LWS_PRE + used, item, send_form_of(r, c, item, min));
		out_item_free(item);
	}
	n = lws_write(c->wsi, frame + LWS_PRE, used, LWS_WRITE_RAW);
	if (n < (int)used)
		return -1;
	if (c->ping_due) {
		c->ping_due = false;
		atomic_fetch_add(&r->stats.pings_sent, 1);
	}
	atomic_fetch_add(&r->stats.messages_out, n_items);
	c->messages_out += n_items;
	if (c->out.first)
		lws_callback_on_writable(c->wsi);
	return 0;
}
