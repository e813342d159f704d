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
 * Once a connection is closing, by send_close() or by libwebsockets for a
 * protocol error, nothing more is queued or written: RFC 6455 (5.5.1)
 * allows no data frame after a Close frame.
 */
#ifndef RELAYD_SEND_H
#define RELAYD_SEND_H

#include <libwebsockets.h>
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
/* Closes c's websocket, the one way relayd does (service thread).  Marks
 * c closing (conn_set_closing(): its queue is dropped, nothing more is
 * queued or written), then with a status other than
 * LWS_CLOSE_STATUS_NOSTATUS has lws send a Close frame carrying status
 * and reason (at most 123 bytes) from c's next WRITEABLE callback, and
 * without one has lws drop the connection once the service thread is
 * back in its event loop.  A caller inside c's lws callback returns 0:
 * returning -1 there would end the connection without the Close frame.
 * Calls after the first change nothing. */
void send_close(struct conn *c, enum lws_close_status status, const char *reason);
/* Writes c's queued frames with one lws_write (WRITEABLE, send_flush()).
 * Returns 0, or -1 when lws should close the connection.  Writes nothing
 * once c is closing: 0 when it first finds that lws began a Close (lws
 * goes on with it), -1 from then on and after send_close(). */
int send_writable(struct relayd *r, struct conn *c);
/* Ends send_hold() and writes to every connection send_frame() listed
 * meanwhile. */
void send_flush(struct relayd *r);

#endif
