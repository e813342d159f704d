/*
 * wsframe.h - websocket frame arithmetic relayd does itself: the header of
 * a server-to-client frame, and the size test for a client's message.
 *
 * relayd frames outgoing messages itself so that many of them can leave in
 * one write (send.c); libwebsockets then only moves the bytes.
 */
#ifndef RELAYD_WSFRAME_H
#define RELAYD_WSFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A header is at most 10 bytes (64-bit payload length). */
#define WSFRAME_HEADER_MAX 10

/* Writes the header of one unfragmented, unmasked text frame carrying
 * payload_len bytes (RFC 6455 5.2) to h; returns its size (2, 4 or 10). */
size_t wsframe_text_header(unsigned char h[WSFRAME_HEADER_MAX], size_t payload_len);
/* The same with RSV1 set when compressed: the payload is a message
 * compressed with permessage-deflate (RFC 7692 6). */
size_t wsframe_header(unsigned char h[WSFRAME_HEADER_MAX], size_t payload_len, bool compressed);

/* Whether a message passes max bytes, from the have bytes of it already
 * received and the rest its current frame's header still announces (up to
 * 2^63 - 1: a 64-bit length).  Exactly max is not over. */
bool wsframe_over(uint64_t have, uint64_t rest, uint64_t max);

#endif
