/*
 * wsext.h - permessage-deflate (RFC 7692) on relayd's websockets: the
 * negotiation, done through libwebsockets' extension hooks, and the
 * inflating of a client's compressed messages.
 *
 * libwebsockets accepts a frame with RSV1 set only while an extension is
 * active on the connection, so relayd registers one named
 * permessage-deflate (ws.c) whose callbacks land here.  lws 4.1.6 writes
 * the extension's name into the 101 answer but no parameter relayd needs,
 * so wsext_answer() completes that header line (see there).
 *
 * Inbound: the compressed frames of a message are collected in the
 * connection's zrx buffer (at most max_message_bytes), then inflated at
 * once by the service thread's one inflater into its one output buffer, and
 * handed to lws, which checks the text is UTF-8 and passes it to the
 * RECEIVE callback as one chunk.  A connection keeps no zlib state.  A
 * message that inflates past max_message_bytes closes the connection with
 * 1009 at that byte; data that does not inflate closes it with 1007.
 *
 * Outbound compression is send.c's (pmdz.h).  Threading: service thread.
 */
#ifndef RELAYD_WSEXT_H
#define RELAYD_WSEXT_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

struct conn;
struct relayd;

/* The handshake's state, in lws's per-session storage (ws.c). */
struct wsext_neg {
	int8_t seen;    /* permessage-deflate offers lws asked about */
	int8_t chosen;  /* the one accepted (pmdoffer.h), -1: none */
	bool on;        /* accepted: the connection compresses */
	bool answered;  /* wsext_answer() completed the header */
};

/* libwebsockets' copy of its private struct lws_ext_pm_deflate_rx_ebufs
 * (4.1.6): what LWS_EXT_CB_PAYLOAD_RX passes. */
struct wsext_bufs {
	struct lws_tokens in, out;
};

/* The service thread's inflate buffer of max_message_bytes + 1, made once;
 * returns 0 or ERR_NOMEM. */
int wsext_init(struct relayd *r);
/* Frees it. */
void wsext_free(struct relayd *r);

/* LWS_CALLBACK_CONFIRM_EXTENSION_OKAY for the extension name: 0 accepts
 * this offer (the first that pmdoffer_choose() picks, with ws_deflate on),
 * 1 declines it. */
int wsext_confirm(struct relayd *r, struct lws *wsi, struct wsext_neg *neg, const char *name);

/*
 * LWS_CALLBACK_ADD_HEADERS of a websocket answer with deflate on: lws has
 * written "Sec-WebSocket-Extensions: permessage-deflate\r\n" just before
 * a->p; this puts the parameters before that line's end and moves a->p on.
 * Returns 0 (also when there is nothing to do), or -1 when the bytes before
 * a->p are not that line (a libwebsockets other than the one it was written
 * for): then the handshake fails rather than answer wrongly.
 */
int wsext_answer(struct lws *wsi, struct wsext_neg *neg, struct lws_process_html_args *a);

/* LWS_EXT_CB_PAYLOAD_RX for c (NULL: not ours): passes an uncompressed
 * message through; collects a compressed one and, at its end, points
 * io->out at the inflated text.  Returns the lws code it expects. */
int wsext_on_rx(struct relayd *r, struct conn *c, struct lws *wsi, struct wsext_bufs *io);

#endif
