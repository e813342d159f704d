/*
 * pmdoffer.h - choosing a client's permessage-deflate offer (RFC 7692).
 *
 * A client lists its offers in Sec-WebSocket-Extensions, in order of
 * preference: `permessage-deflate; client_max_window_bits, permessage-deflate`.
 * relayd accepts the first offer it can honour and answers with
 * server_no_context_takeover and client_no_context_takeover, whatever the
 * offer held: each message either way is compressed on its own, so no
 * deflate or inflate window is kept per connection (RFC 7692 7.1.1).
 *
 * An offer is declined when it has an unknown or repeated parameter, a
 * value where none belongs, a bad window size, or a server_max_window_bits
 * other than 15: an event is compressed once for all its recipients, with
 * zlib's 32 KiB window.  client_max_window_bits (with or without a value) is
 * allowed and left out of the answer: the inflater takes any window.
 *
 * A pure function of the header text, tested on its own.
 */
#ifndef RELAYD_PMDOFFER_H
#define RELAYD_PMDOFFER_H

#include <stddef.h>

/* The longest answer: the name and four parameters. */
#define PMDOFFER_ANSWER_MAX 128

struct pmdoffer_choice {
	int offer;     /* the chosen permessage-deflate offer, counted from 0
			  among those offers only; -1: none accepted */
	char answer[PMDOFFER_ANSWER_MAX]; /* the header value to send back */
};

/*
 * Reads the header value hdr (len bytes, not NUL-terminated) and fills
 * out.  Returns the number of permessage-deflate offers seen (0 or more);
 * out->offer is -1 when none is accepted.
 *
 * lws_safe: libwebsockets 4.1.6 activates the extension at the offer the
 * caller lets it, and fails the handshake if another permessage-deflate
 * offer follows one without parameters; when set, an offer is chosen only
 * if it has parameters or is the last one.
 */
int pmdoffer_choose(const char *hdr, size_t len, int lws_safe, struct pmdoffer_choice *out);

#endif
