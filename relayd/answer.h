/*
 * answer.h - turning stored's messages into frames for clients (service
 * thread).
 *
 * EVENT_RESULT becomes the client's OK, if the client still waits for it;
 * a late answer after a timeout is dropped, since the client already had
 * `OK false error:`.  QUERY_EVENTS become EVENT frames.  QUERY_LAST does
 * too, then ends the answer as QUERY_DONE does.  QUERY_DONE becomes EOSE
 * (then any live events held back meanwhile) or CLOSED.  A DELIVER is
 * shared by all its targets: one copy of the event, a small head per
 * recipient.  stored's questions CONNS_ASK and CONN_KICK go to
 * connlist.h.
 */
#ifndef RELAYD_ANSWER_H
#define RELAYD_ANSWER_H

#include <nng/nng.h>

struct relayd;

/* Handles one message from the reply socket (MAIL_RPC).  msg is borrowed:
 * the caller frees it. */
void answer_rpc(struct relayd *r, nng_msg *msg);
/* Handles one message from the sub socket (MAIL_DELIVER): a DELIVER, or
 * stored's METRICS or POLICY.  msg is borrowed: the caller frees it. */
void answer_deliver(struct relayd *r, nng_msg *msg);

#endif
