/*
 * backlog.h - a worker's requests to stored that nng's send buffer had no
 * room for, kept in order until it has.
 *
 * A worker sends without blocking, and nng's send buffer of the rpc socket
 * holds 1024 messages.  A message nng cannot take waits here, and every
 * later message queues behind it, so a client's SUB_OPEN never overtakes
 * an earlier SUB_CLOSE of the same id:
 *   - control messages (the worker's own: SUB_OPEN of a subscription
 *     registered again, SUB_CLOSE, CONN_CLOSED, SUB_REPLAY) always wait;
 *     they are bounded by the subscriptions and connections the worker
 *     holds;
 *   - requests (a client's EVENT, REQ, COUNT, NIP-86 call) wait while fewer
 *     than max requests are waiting, and are refused past it.
 * Refusing a client's request is a fair answer ("error: storage is
 * unavailable"); losing one of the worker's own would leave stored and the
 * worker disagreeing about the subscriptions.
 * Every send pumps the backlog into nng, and so does backlog_pump(), which
 * the service thread calls when told the backlog filled (woke) and on a
 * short timer until it is empty.  A closed backlog (no link to stored, or
 * no HELLO on it yet) refuses everything and holds nothing: what was
 * waiting is dropped when the link goes down.  nng's own send buffer
 * belongs to the socket and outlives the pipe: what it still holds reaches
 * stored ahead of the new HELLO, which then forgets any subscription those
 * filed, and their answers find nothing waiting for them.
 *
 * Thread-safe: lanes, the service thread and nng's pipe callbacks use it.
 */
#ifndef RELAYD_BACKLOG_H
#define RELAYD_BACKLOG_H

#include <nng/nng.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Hands msg to nng without blocking: 0 (taken), ERR_FULL (not taken, no
 * room now) or another error (not taken, and never will be). */
typedef int (*backlog_try_fn)(void *arg, nng_msg *msg);

struct backlog_item;

struct backlog {
	pthread_mutex_t lock;
	struct backlog_item *head, *tail;
	size_t count;    /* messages waiting */
	size_t requests; /* of them, clients' requests */
	bool open;
	backlog_try_fn try_send;
	void *arg;
};

/* Initialises b closed and empty.  try_send(arg, msg) hands each message
 * to nng. */
void backlog_init(struct backlog *b, backlog_try_fn try_send, void *arg);
/* Drops what waits and destroys the lock.  b may be initialised again. */
void backlog_destroy(struct backlog *b);

/*
 * Sends msg (taken in every case) after everything waiting, or queues it.
 * control: the worker's own message, never refused while open; else a
 * request, refused with ERR_FULL when max_requests requests wait already.
 * *woke is set when the backlog went from empty to holding something (the
 * caller then makes sure the service thread pumps it).  Returns 0 (sent or
 * queued), ERR_CLOSED (not open), ERR_FULL, ERR_NOMEM or ERR_NNG.
 */
int backlog_send(struct backlog *b, nng_msg *msg, bool control, size_t max_requests,
		 bool *woke);
/* Hands nng what it takes now, in order; a message nng refuses for good
 * is dropped, and if that is the first of backlog_open() the backlog
 * closes.  Returns whether messages still wait. */
bool backlog_pump(struct backlog *b);
/* Opens the backlog with first (a new link's HELLO) ahead of anything:
 * sent now, or waiting at the head.  Returns 0, or an error (first freed,
 * the backlog stays closed).  *woke as for backlog_send(). */
int backlog_open(struct backlog *b, nng_msg *first, bool *woke);
/* Closes it and drops what waits.  Returns how many were dropped. */
size_t backlog_close(struct backlog *b);
/* Messages waiting now. */
size_t backlog_count(struct backlog *b);
/* Whether it is open: closed by backlog_close(), or when nng refuses the
 * first message of backlog_open() for good (then the link needs a new
 * HELLO). */
bool backlog_is_open(struct backlog *b);

#endif
