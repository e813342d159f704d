/*
 * send.h - queueing frames to a client and writing them (service thread).
 *
 * send_frame() only queues and asks libwebsockets for a WRITEABLE callback;
 * send_writable() frames the queued messages itself and writes up to 64 KiB
 * of them with one lws_write.  Frames queued while the mailbox is drained
 * (replies and live deliveries) skip the WRITEABLE round trip instead: the
 * drain lists their connections once each and send_flush() writes to each
 * at the end, straight away unless libwebsockets still holds part of an
 * earlier write.  A round trip arms and disarms the socket's POLLOUT, two
 * epoll_ctl calls per write, which cost fan-out more than the epoll loop
 * saved (bench/RESULTS.md item 25).  A client
 * whose queue passes max_outbound_bytes is told with a NOTICE-less close
 * (it is not reading, so a NOTICE would only queue behind the rest).
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

/* Queues head (owned) + body (a reference given up, or NULL) + tail ('\0'
 * for none) to c.  Returns 0, or ERR_FULL when c was over its cap and is
 * being closed, or ERR_NOMEM. */
int send_frame(struct relayd *r, struct conn *c, char *head, size_t head_len,
	       struct shared *body, char tail);
/* Writes queued frames (at least one).  Returns -1 when lws should close the connection. */
int send_writable(struct relayd *r, struct conn *c);
/* Ends send_hold() and writes to every connection send_frame() listed
 * meanwhile. */
void send_flush(struct relayd *r);

#endif
