/*
 * ingress.h - the threads that turn client text into validated work.
 *
 * Each connection is bound to one ingress lane (conn slot % lanes), so its
 * messages are handled in the order they arrived.  A lane parses the JSON,
 * dispatches on the verb through a table (verbs.h) and posts the outcome to
 * the service thread's mailbox; events go to stored from here, so signature
 * checks and JSON never run on the websocket loop.
 */
#ifndef RELAYD_INGRESS_H
#define RELAYD_INGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct relayd;
struct ingress;

/* Starts r->cfg.verify_threads lanes (0: one lane that ingress_submit()
 * runs on the caller's thread).  Returns NULL on failure. */
struct ingress *ingress_start(struct relayd *r);
/* Stops the lanes (dropping queued messages) and frees them.  NULL-safe. */
void ingress_stop(struct ingress *in);
/*
 * Queues one complete client message, taking data (malloc'ed, len bytes
 * followed by a NUL, as buf_take() returns).  limited: the sender's address
 * is over its rate; the lane answers "rate-limited:" instead of acting.
 * *pause is set when the connection now has max_queued_messages waiting,
 * or when the lane was full and took this message only because earlier ones
 * of the connection are still in it: the caller should stop reading from it
 * until a MAIL_RESUME for conn_id, which the lane posts once half of them
 * are handled (in the second case, once this message is taken).
 * Returns 0, or ERR_FULL when the lane is saturated and holds nothing of
 * the connection's (so the answer overtakes nothing) or ERR_NOMEM (data
 * freed; the message is answered "rate-limited:" as its verb calls for: OK
 * false for an EVENT or AUTH, CLOSED for a REQ or COUNT, else a NOTICE).
 */
int ingress_submit(struct ingress *in, uint64_t conn_id, char *data, size_t len, bool limited,
		   bool *pause);

/* Tells conn_id's lane the connection closed (after its last message), so
 * the lane forgets what it knew about it.  Never refused. */
void ingress_forget(struct ingress *in, uint64_t conn_id);

#endif
