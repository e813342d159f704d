/*
 * wsframe.h - the header of a server-to-client websocket frame.
 *
 * relayd frames outgoing messages itself so that many of them can leave in
 * one write (send.c); libwebsockets then only moves the bytes.
 */
#ifndef RELAYD_WSFRAME_H
#define RELAYD_WSFRAME_H

#include <stddef.h>

/* A header is at most 10 bytes (64-bit payload length). */
#define WSFRAME_HEADER_MAX 10

/* Writes the header of one unfragmented, unmasked text frame carrying
 * payload_len bytes (RFC 6455 5.2) to h; returns its size (2, 4 or 10). */
size_t wsframe_text_header(unsigned char h[WSFRAME_HEADER_MAX], size_t payload_len);

#endif
