/*
 * send.h - queueing frames to a client and writing them (service thread).
 *
 * send_frame() queues and asks libwebsockets for a WRITEABLE callback;
 * send_writable() frames what is queued and writes up to 64 KiB of it with
 * one lws_write.  Between send_hold() and send_flush() (a mailbox drain),
 * send_frame() lists the connection instead, once, and send_flush() writes
 * to each listed one directly, unless libwebsockets still holds part of an
 * earlier write.  That saves a WRITEABLE round trip per write, which arms
 * and disarms the socket's POLLOUT (bench/RESULTS.md item 25).
 * A client whose queue passes max_outbound_bytes is closed without a
 * NOTICE: it is not reading, so a NOTICE would only queue behind the rest.
 */
#ifndef RELAYD_SEND_H
#define RELAYD_SEND_H

#include <stddef.h>

struct relayd;
struct conn;
struct send_batch;
struct shared;

/* The list of connections a drain gave frames to (r->send), or NULL
 * without memory. */
struct send_batch *send_batch_new(void);
/* Frees it.  NULL-safe. */
void send_batch_free(struct send_batch *b);
/* The mailbox drain begins: send_frame() lists connections instead of
 * asking for WRITEABLE, until send_flush(). */
void send_hold(struct relayd *r);

/* Queues head (malloc'ed, head_len bytes) + body (or NULL) + tail ('\0'
 * for none) to c.  head and the body reference are taken in every case.
 * Returns 0, ERR_FULL (c is closing, or went over max_outbound_bytes and is
 * now closed) or ERR_NOMEM. */
int send_frame(struct relayd *r, struct conn *c, char *head, size_t head_len,
	       struct shared *body, char tail);
/* Writes c's queued frames with one lws_write (WRITEABLE, send_flush()).
 * Returns 0, or -1 when lws should close the connection. */
int send_writable(struct relayd *r, struct conn *c);
/* Ends send_hold() and writes to every connection send_frame() listed
 * meanwhile. */
void send_flush(struct relayd *r);

#endif
