/*
 * answer.h - turning stored's messages into frames for clients (service
 * thread).
 *
 * EVENT_RESULT becomes the client's OK (if it is still waiting: a late
 * answer after a timeout is dropped, since the client already had
 * `OK false error:`).  QUERY_EVENTS become EVENT frames; QUERY_LAST too, then
 * EOSE as QUERY_DONE (EOSE) does; QUERY_DONE becomes
 * EOSE (then any live events held back meanwhile) or CLOSED.  A DELIVER is
 * shared by all its targets: one copy of the event, a small head per
 * recipient.
 */
#ifndef RELAYD_ANSWER_H
#define RELAYD_ANSWER_H

#include <nng/nng.h>

struct relayd;

/* Handles one reply from stored-rpc.ipc; does not free msg. */
void answer_rpc(struct relayd *r, nng_msg *msg);
/* Handles one DELIVER from stored-pub.ipc; does not free msg. */
void answer_deliver(struct relayd *r, nng_msg *msg);

#endif
