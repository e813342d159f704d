/*
 * link.h - a worker's three sockets to stored.
 *
 * rpc (raw REQ, dials stored-rpc.ipc or link_rpc_url): every request
 * carries our own request id in the message header.  Raw mode means nng
 * never re-sends a request on its own: a request lost with a dying stored
 * is answered by our timeout.  reply (PULL, listens on
 * relayd-<instance>-<boot id>.ipc, or dials link_reply_url's port plus our
 * instance) is where stored answers, once our HELLO has told it the boot id.
 * sub (SUB, dials stored-pub.ipc or link_pub_url) receives this worker's
 * DELIVER messages and the METRICS and POLICY sent to all workers (topics:
 * msg_topic()); with link_reply_url its DELIVERs come on reply instead
 * (stored/pub.h says why).  They dial in the background and redial forever, so
 * stored may start after the workers or restart.  A tcp link that stays
 * silent for link_timeout_ms (stored publishes METRICS every second) is
 * closed and dialled again, since a pulled cable closes nothing by itself.
 * Receive threads post what arrives to the mailbox; pipe events post
 * MAIL_LINK_UP / MAIL_LINK_DOWN.
 */
#ifndef RELAYD_LINK_H
#define RELAYD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct relayd;

/* Allocates r->link, opens the three sockets (listening on reply,
 * dialling the others) and starts the receive threads and the listener
 * check.  Returns 0, ERR_NNG or ERR_NOMEM; on an error the caller exits. */
int link_open(struct relayd *r);
/* Every LINK_WATCH_MS (service thread): gives the link fresh dialers when
 * it has been down for a while (see link.c). */
#define LINK_WATCH_MS 250
void link_watch(struct relayd *r, int64_t now_ms);
/* Closes the sockets, joins the receive threads and removes the reply
 * socket's file. */
void link_close(struct relayd *r);
/* Frees what link_open() allocated, after link_close() and once no thread
 * sends any more (connections closed at shutdown still try).  NULL-safe. */
void link_free(struct relayd *r);
/* Service thread: one MAIL_DELIVER was taken off the mailbox, so the
 * receive thread may take more from nng (deliver_queue). */
void link_deliver_taken(struct relayd *r);
/* A HELLO_ACK arrived (any thread): the link's HELLO was taken. */
void link_hello_acked(struct relayd *r);
/* How often the listener check restarted the reply socket's listener. */
uint64_t link_relistens(const struct relayd *r);
/* A fresh request id (30 bits, never 0; replay.h sets bit 30 on its own). */
uint32_t link_request_id(struct relayd *r);
/*
 * Sends one encoded request (header included) with request_id, a client's
 * (EVENT, REQ, COUNT, NIP-86): after whatever waits in the backlog, or
 * waiting there itself while fewer than request_backlog requests do
 * (backlog.h).  Never blocks.  Returns 0, or ERR_CLOSED (no stored, or no
 * HELLO sent on the current link yet) / ERR_FULL (the backlog is full) /
 * ERR_NNG / ERR_NOMEM.  Thread-safe.
 */
int link_send(struct relayd *r, uint32_t request_id, const void *data, size_t len);
/* The same for a message the worker owes stored on its own (a SUB_OPEN
 * re-registering a subscription, SUB_CLOSE, CONN_CLOSED, SUB_REPLAY): it
 * waits in the backlog however many do.  So it fails only with ERR_CLOSED
 * (no stored, or no HELLO on this link yet), ERR_NNG or ERR_NOMEM. */
int link_send_control(struct relayd *r, uint32_t request_id, const void *data, size_t len);
/* Service thread: hands nng what waits in the backlog; returns whether
 * something still waits (then call it again soon). */
bool link_pump(struct relayd *r);
/*
 * Sends the HELLO of a new link (service thread) and opens the link to
 * link_send().  Before it stored does not know where to send replies (its
 * reply channel is named by the HELLO), so every other request waits for
 * it, and it goes ahead of anything (it waits at the backlog's head if nng
 * has no room: stale messages of the old link may still fill nng's
 * buffer).  Returns 0, ERR_CLOSED, ERR_NNG or ERR_NOMEM.
 */
int link_send_hello(struct relayd *r, uint32_t request_id, const void *data, size_t len);

#endif
