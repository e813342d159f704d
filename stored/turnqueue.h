/*
 * turnqueue.h - a bounded queue that serves its senders in turn, for
 * stored's query pool.
 *
 * Every query job (a REQ's history, a resume, a replay of lost deliveries,
 * a COUNT) names the connection it answers.  A plain FIFO lets one client
 * that sends a hundred heavy COUNTs make every other client's REQ wait for
 * all of them.  Here items are queued per sender and popped one sender at a
 * time, round robin: a sender's items keep their order, and a sender with
 * one item waits behind at most one item of every other sender.
 *
 * Two bounds, each refusing the push (the caller answers its client with an
 * error), as queue.h does: capacity counts items over all senders, and
 * per_sender the items one sender has queued, so that one client cannot
 * fill the queue and have everyone else's queries refused.  Any
 * thread may push or pop; several consumers may pop (the query pool), and
 * two items of one sender may then run at once, as they could before.
 */
#ifndef STORED_TURNQUEUE_H
#define STORED_TURNQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct turnqueue;

/* A sender: the worker and that worker's connection id. */
struct turn_sender {
	uint16_t worker;
	uint64_t conn_id;
};

/* Creates a queue holding at most capacity items, at most per_sender of
 * them from one sender, or NULL (no memory).  turns false makes it first
 * come, first served (every push counts as one sender's, and per_sender is
 * not applied): the other side of the design comparison in
 * bench/RESULTS.md. */
struct turnqueue *turnqueue_new(size_t capacity, size_t per_sender, bool turns);
/* Frees the queue (not the items still in it).  NULL-safe. */
void turnqueue_free(struct turnqueue *q);
/* Appends item after from's other items.  Returns 0, ERR_FULL (capacity),
 * ERR_TOOBIG (from has per_sender queued), ERR_NOMEM, or ERR_CLOSED after
 * turnqueue_close(). */
int turnqueue_push(struct turnqueue *q, struct turn_sender from, void *item);
/* Removes the oldest item of the sender whose turn it is, waiting for one.
 * Returns NULL once the queue is closed and empty. */
void *turnqueue_pop(struct turnqueue *q);
/* Refuses further pushes and wakes consumers; queued items remain poppable. */
void turnqueue_close(struct turnqueue *q);
/* Items currently queued, over all senders. */
size_t turnqueue_length(struct turnqueue *q);
/* Senders with items queued. */
size_t turnqueue_senders(struct turnqueue *q);

#endif
