/*
 * link.h - a worker's three sockets to stored.
 *
 * rpc (raw REQ, dials stored-rpc.ipc): every request carries our own
 * request id in the message header.  Raw mode means nng never re-sends a
 * request on its own: a request lost with a dying stored is answered by our
 * timeout.  reply (PULL, listens on relayd-<instance>-<boot id>.ipc) is
 * where stored answers, once our HELLO has told it the boot id.
 * sub (SUB, dials stored-pub.ipc) receives this worker's DELIVER messages
 * only (topic: version, type, worker).  Both dial in the background and
 * redial forever, so stored may start after the workers or restart.
 * Receive threads post what arrives to the mailbox; pipe events post
 * MAIL_LINK_UP / MAIL_LINK_DOWN.
 */
#ifndef RELAYD_LINK_H
#define RELAYD_LINK_H

#include <stddef.h>
#include <stdint.h>

struct relayd;

/* Opens the three sockets (listening on reply, dialling the others) and
 * starts the receive threads.  Returns 0 or
 * ERR_NNG. */
int link_open(struct relayd *r);
/* Every LINK_WATCH_MS (service thread): gives the link fresh dialers when
 * it has been down for a while (see link.c). */
#define LINK_WATCH_MS 250
void link_watch(struct relayd *r, int64_t now_ms);
/* Closes the sockets, joins the receive threads and removes the reply
 * socket's file. */
void link_close(struct relayd *r);
/* A fresh request id (30 bits, never 0; replay.h sets bit 30 on its own). */
uint32_t link_request_id(struct relayd *r);
/*
 * Sends one encoded request (header included) with request_id.  Never
 * blocks.  Returns 0, or ERR_CLOSED (no stored, or no HELLO sent on the
 * current link yet) / ERR_NNG / ERR_NOMEM.  Thread-safe.
 */
int link_send(struct relayd *r, uint32_t request_id, const void *data, size_t len);
/*
 * Sends the HELLO of a new link (service thread) and opens the link to
 * link_send().  Before it stored does not know where to send replies (its
 * reply channel is named by the HELLO), so every other request waits for
 * it.  Same returns as link_send().
 */
int link_send_hello(struct relayd *r, uint32_t request_id, const void *data, size_t len);

#endif
