/*
 * wsguard.h - closing a websocket whose client sends an unmasked frame.
 *
 * RFC 6455 (5.1): a client masks every frame it sends, and a server closes
 * the connection when one is not masked.  libwebsockets 4.1.6, Debian 12's,
 * does not check: it unmasks what is masked and passes an unmasked frame on
 * as it is.  So relayd watches the bytes itself, on their way from the
 * kernel to the library: it defines recv() and close() (wsguard_hooks.c;
 * the library's calls bind to the executable's definitions), and for each
 * connection it accepted follows the stream: the HTTP request head, and
 * after a websocket upgrade every frame header.  At the first unmasked
 * frame the read ends just before it and the socket is shut for reading,
 * so the library sees the end of the stream and closes the connection
 * (RFC 6455 allows closing without a close frame here).
 *
 * A request that is not an upgrade is followed past its body
 * (Content-Length) to the next request on the connection, which may be an
 * upgrade; one with a chunked body ends the following.  The scanner is a
 * pure function of the bytes, so the unit tests drive it directly.
 * Lengths are not judged here: ws.c closes with 1009 a message whose frames
 * announce more than max_message_bytes, from the lengths lws parsed.
 */
#ifndef RELAYD_WSGUARD_H
#define RELAYD_WSGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a followed stream is. */
enum wsguard_phase {
	WSGUARD_HEAD,    /* an HTTP request head */
	WSGUARD_BODY,    /* a plain request's body (payload_left to go) */
	WSGUARD_FRAME,   /* a frame header (hdr collects it) */
	WSGUARD_PAYLOAD, /* a frame's payload (payload_left to go) */
	WSGUARD_OFF,     /* not a websocket: nothing more to check */
	WSGUARD_BROKEN,  /* an unmasked frame came: the stream is over */
};

/* The longest head followed (each request's); a longer one is left to the
 * library. */
#define WSGUARD_HEAD_MAX 16384

struct wsguard_stream {
	enum wsguard_phase phase;
	uint32_t head_bytes;
	char line[40];     /* the current header line's start, lowercased */
	uint8_t line_len;
	bool upgrade;      /* the head asked for "Upgrade: websocket" */
	bool chunked;      /* the head's body is chunked */
	bool started;      /* a non-empty line of this head came */
	uint64_t content_length;
	uint8_t hdr[14];   /* the frame header so far */
	uint8_t hdr_len;
	uint64_t payload_left; /* of a frame, or of a plain request's body */
};

/* A stream at the start of its HTTP request. */
void wsguard_stream_init(struct wsguard_stream *st);

/*
 * Follows len more bytes of st.  Returns how many of them may be passed on:
 * all of them, or, when an unmasked frame starts among them, the bytes
 * before its first byte (0 if it began in an earlier read); st is then
 * WSGUARD_BROKEN, and passes nothing more.
 */
size_t wsguard_scan(struct wsguard_stream *st, const uint8_t *data, size_t len);

/* A connection relayd accepted: its bytes are followed from now on.
 * Out of memory, it is not (logged once). */
void wsguard_follow(int fd);
/* fd is being closed: forget its stream.  Any thread. */
void wsguard_forget(int fd);
/* After n bytes were read from fd into buf: how many to pass on (fewer at
 * an unmasked frame, which also shuts fd for reading).  Any thread; fds not
 * followed pass everything. */
size_t wsguard_filter(int fd, const void *buf, size_t n);

/* Connections closed for an unmasked frame since start. */
uint64_t wsguard_refused(void);

#endif
