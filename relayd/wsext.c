/* wsext.c - permessage-deflate negotiation and inflating (see wsext.h). */
#include "wsext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/log.h"
#include "conn.h"
#include "pmdoffer.h"
#include "pmdz.h"
#include "relayd.h"
#include "send.h"

/* lws 4.1.6's private enum pmd_return: what a PAYLOAD_RX callback tells it. */
enum {
	WSEXT_EMPTY_NONFINAL = 3,  /* input taken, no output yet */
	WSEXT_EMPTY_FINAL = 4,     /* output is the message's last */
	WSEXT_PASS = 5,            /* PMDR_NOTHING_WE_SHOULD_DO: output is input */
};

#define WSEXT_NAME "permessage-deflate"

int wsext_init(struct relayd *r)
{
	r->inflated_cap = (size_t)relayd_cfg(r)->max_message_bytes + 1;
	r->inflated = malloc(r->inflated_cap);
	r->pmdz = pmdz_new((int)relayd_cfg(r)->ws_deflate_level);
	return r->inflated && r->pmdz ? 0 : ERR_NOMEM;
}

void wsext_free(struct relayd *r)
{
	free(r->inflated);
	pmdz_free(r->pmdz);
}

/* Runs the negotiation once, at lws's first question. */
static void wsext_decide(struct relayd *r, struct lws *wsi, struct wsext_neg *neg)
{
	char hdr[512];
	struct pmdoffer_choice choice;
	int n;

	neg->chosen = -1;
	if (!relayd_cfg(r)->ws_deflate)
		return;
	n = lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_EXTENSIONS);
	if (n <= 0)
		return;
	pmdoffer_choose(hdr, (size_t)n, 1, &choice);
	neg->chosen = (int8_t)choice.offer;
}

int wsext_confirm(struct relayd *r, struct lws *wsi, struct wsext_neg *neg, const char *name)
{
	if (!name || strcmp(name, WSEXT_NAME))
		return 1;
	if (neg->seen == 0)
		wsext_decide(r, wsi, neg);
	if (neg->seen < INT8_MAX)
		neg->seen++;
	if (neg->chosen < 0 || neg->seen - 1 != neg->chosen)
		return 1;
	neg->on = true;
	return 0;
}

int wsext_answer(struct lws *wsi, struct wsext_neg *neg, struct lws_process_html_args *a)
{
	static const char line[] = "Sec-WebSocket-Extensions: " WSEXT_NAME "\r\n";
	const size_t line_len = sizeof(line) - 1;
	struct pmdoffer_choice choice;
	char hdr[512];
	const char *params;
	int n, len;

	if (!neg->on || neg->answered)
		return 0;
	neg->answered = true;
	if (memcmp(a->p - line_len, line, line_len)) {
		log_warnx("libwebsockets wrote an unexpected extension answer; refusing the upgrade");
		return -1;
	}
	n = lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_EXTENSIONS);
	pmdoffer_choose(hdr, n > 0 ? (size_t)n : 0, 1, &choice);
	if (choice.offer != neg->chosen)
		return -1;
	params = choice.answer + strlen(WSEXT_NAME);
	len = (int)strlen(params);
	if (len + 2 > a->max_len)
		return -1;
	/* Over the line's CRLF, then the CRLF again. */
	memcpy(a->p - 2, params, (size_t)len);
	memcpy(a->p - 2 + len, "\r\n", 2);
	a->p += len;
	a->max_len -= len;
	return 0;
}

/* Closes c for what its compressed message did; the rest of it is
 * dropped (c->closing). */
static void wsext_refuse(struct relayd *r, struct conn *c, enum lws_close_status status,
			 const char *why)
{
	char too_big[64];

	if (status == LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE) {
		/* The words ws.c closes an uncompressed one with. */
		snprintf(too_big, sizeof(too_big), "message too big (max %u bytes)",
			 relayd_cfg(r)->max_message_bytes);
		why = too_big;
		atomic_fetch_add(&r->stats.too_big_closed, 1);
	}
	log_debug("closing %s: %s", c->ip, why);
	buf_free(&c->zrx);
	c->zin = ZIN_DROP;
	send_close(c, status, why);
}

/* Whether the n bytes at p (valid UTF-8 so far, lws checks that) end
 * between two characters rather than inside one. */
static bool wsext_utf8_whole(const unsigned char *p, size_t n)
{
	size_t i = n, want;

	while (i > 0 && n - i < 4 && (p[i - 1] & 0xC0) == 0x80)
		i--;
	if (i == 0)
		return true; /* nothing but continuation bytes: lws refused those */
	want = p[i - 1] >= 0xF0 ? 4 : p[i - 1] >= 0xE0 ? 3 : p[i - 1] >= 0xC0 ? 2 : 1;
	return n - (i - 1) >= want;
}

/* The whole compressed message is in c->zrx: inflate it into r->inflated. */
static int wsext_inflate(struct relayd *r, struct conn *c, struct wsext_bufs *io)
{
	size_t n = 0, max = relayd_cfg(r)->max_message_bytes;
	int rc = pmdz_inflate(r->pmdz, (const unsigned char *)c->zrx.data, c->zrx.len,
			      r->inflated, max, &n);

	buf_free(&c->zrx); /* an idle connection holds no compressed bytes */
	c->zin = ZIN_IDLE;
	if (rc == ERR_TOOBIG) {
		wsext_refuse(r, c, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "");
		return WSEXT_EMPTY_NONFINAL;
	}
	/* lws checks the UTF-8 of what it is given, but not that the
	 * message ends between two characters when an extension made it. */
	if (rc || !wsext_utf8_whole(r->inflated, n)) {
		wsext_refuse(r, c, LWS_CLOSE_STATUS_INVALID_PAYLOAD, "invalid compressed data");
		return WSEXT_EMPTY_NONFINAL;
	}
	io->out.token = r->inflated;
	io->out.len = (int)n;
	return WSEXT_EMPTY_FINAL;
}

/* A chunk of a compressed message: kept until its last frame ends. */
static int wsext_collect(struct relayd *r, struct conn *c, struct lws *wsi,
			 struct wsext_bufs *io)
{
	size_t len = io->in.len > 0 ? (size_t)io->in.len : 0;

	io->in.len = 0;
	io->out.len = 0;
	if (c->zrx.len + len > relayd_cfg(r)->max_message_bytes) {
		wsext_refuse(r, c, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "");
		return WSEXT_EMPTY_NONFINAL;
	}
	if (buf_append(&c->zrx, io->in.token, len))
		return -1;
	if (!lws_is_final_fragment(wsi))
		return WSEXT_EMPTY_NONFINAL;
	return wsext_inflate(r, c, io);
}

/* lws also calls with no payload: after it passed a frame's payload in
 * bulk, and for a frame without any.  Only a compressed message's empty
 * last frame matters then. */
static int wsext_on_empty(struct relayd *r, struct conn *c, struct lws *wsi,
			  struct wsext_bufs *io)
{
	io->out = io->in;
	io->out.len = 0;
	if (c->zin == ZIN_DEFLATED)
		return lws_is_final_fragment(wsi) ? wsext_inflate(r, c, io) : WSEXT_EMPTY_NONFINAL;
	if (c->zin == ZIN_PLAIN && lws_is_final_fragment(wsi))
		c->zin = ZIN_IDLE;
	return WSEXT_PASS;
}

/* Takes the chunk without passing anything on. */
static int wsext_swallow(struct wsext_bufs *io)
{
	io->in.len = 0;
	io->out.len = 0;
	return WSEXT_EMPTY_NONFINAL;
}

int wsext_on_rx(struct relayd *r, struct conn *c, struct lws *wsi, struct wsext_bufs *io)
{
	bool rsv1 = (lws_get_reserved_bits(wsi) & 0x40) != 0, new_frame;

	if (!c || c->closing || c->zin == ZIN_DROP)
		return wsext_swallow(io);
	if (io->in.len <= 0)
		return wsext_on_empty(r, c, wsi, io);
	/* lws passes a frame's payload on in chunks, each seeing its RSV1. */
	new_frame = !c->zin_midframe;
	c->zin_midframe = lws_remaining_packet_payload(wsi) != 0;
	if (c->zin == ZIN_IDLE) {
		c->zin = rsv1 ? ZIN_DEFLATED : ZIN_PLAIN;
	} else if (rsv1 && new_frame) {
		/* RFC 7692 6.1: only a message's first frame has RSV1. */
		wsext_refuse(r, c, LWS_CLOSE_STATUS_PROTOCOL_ERR, "RSV1 on a continuation frame");
		return wsext_swallow(io);
	}
	if (c->zin == ZIN_DEFLATED)
		return wsext_collect(r, c, wsi, io);
	if (lws_is_final_fragment(wsi))
		c->zin = ZIN_IDLE;
	io->out = io->in;
	return WSEXT_PASS;
}
