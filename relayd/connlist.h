/*
 * connlist.h - a worker's answers to stored's questions for `relayctl
 * conns` and `relayctl kick` (service thread).
 *
 * CONNS_ASK is answered with CONNS_LIST: each open connection's client
 * address, opening time, message counters, subscription count and NIP-42
 * pubkeys.  The list is built in one pass over the connection table from
 * what each connection keeps, so no event loop waits on anything; it holds
 * at most the ask's max connections and MSG_CONNS_LIST_BYTES.  A
 * connection already closing is not listed.  CONN_KICK closes the
 * connection it names with a websocket Close and is answered with
 * CONN_KICKED.  Both answers go to stored as control requests (link.h),
 * echoing the question's request id; a question that does not decode is
 * logged and dropped (stored names the worker as not answering).
 */
#ifndef RELAYD_CONNLIST_H
#define RELAYD_CONNLIST_H

#include <stddef.h>

#include "../proto/msg.h"

struct relayd;

/* Answers a CONNS_ASK (h its header, body/len the rest). */
void connlist_ask(struct relayd *r, const struct msg_header *h, const void *body, size_t len);
/* Carries out and answers a CONN_KICK (h its header, body/len the rest). */
void connlist_kick(struct relayd *r, const struct msg_header *h, const void *body, size_t len);

#endif
