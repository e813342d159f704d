/*
 * ws_frame.h - RFC 6455 frames as a client writes and reads them.
 *
 * Pure functions over byte buffers, no I/O.  A client masks every frame it
 * sends (ws_frame_append*); a server never masks, so a masked frame from the
 * server, a reserved bit, an unknown opcode, a fragmented or oversized
 * control frame, or a payload above the caller's cap is a protocol error.
 */
#ifndef COMMON_WS_FRAME_H
#define COMMON_WS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct buf;

enum ws_opcode {
	WS_OP_CONT = 0x0,
	WS_OP_TEXT = 0x1,
	WS_OP_BINARY = 0x2,
	WS_OP_CLOSE = 0x8,
	WS_OP_PING = 0x9,
	WS_OP_PONG = 0xa,
};

/* Or'ed into an opcode given to ws_frame_appendv(): RSV1, a compressed
 * message's first frame (RFC 7692 6). */
#define WS_RSV1 0x40

/* The payload of one received frame; payload points into the input. */
struct ws_frame {
	enum ws_opcode opcode;
	bool fin;
	bool rsv1;        /* compressed (only when decoding allowed it) */
	const uint8_t *payload;
	size_t len;
	size_t frame_len; /* header + payload: bytes to consume */
};

/*
 * Appends one frame whose payload is the concatenation of the iovcnt pieces,
 * masked with mask_key, to out.  Returns 0 or ERR_NOMEM (out unchanged).
 */
int ws_frame_appendv(struct buf *out, enum ws_opcode op, bool fin, const struct iovec *iov,
		     int iovcnt, uint32_t mask_key);

/* ws_frame_appendv() with one piece. */
int ws_frame_append(struct buf *out, enum ws_opcode op, bool fin, const void *payload,
		    size_t len, uint32_t mask_key);

/*
 * Decodes the frame at the start of data (len bytes).  Returns 1 and fills *f
 * when a whole frame is there, 0 when more bytes are needed, or ERR_INVAL on
 * a protocol error and ERR_TOOBIG for a payload above max_payload.
 */
int ws_frame_decode(const uint8_t *data, size_t len, size_t max_payload, struct ws_frame *f);

/* The same, with RSV1 allowed on a data frame when rsv1_ok. */
int ws_frame_decode_ext(const uint8_t *data, size_t len, size_t max_payload, bool rsv1_ok,
			struct ws_frame *f);

#endif
