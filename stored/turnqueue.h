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
 * thread may push or pop; several consumers may pop (the query pool).
 *
 * Turns alone still let one client's heavy jobs hold every consumer at
 * once, so that a cheap REQ of anyone else waits for one of them to end.
 * A third bound, set with turnqueue_bound_running(), caps the items of one
 * sender being worked on at a time: a sender at that cap is skipped until
 * turnqueue_done() says one of its items is finished, and a consumer stays
 * free for the others.
 *
 * That bound still lets as many heavy senders as there are consumers hold
 * them all.  turnqueue_keep_for_light() keeps some consumers for senders
 * known to be cheap: turnqueue_done() is told what each item cost, an item
 * that cost a threshold or more marks its sender heavy for a while, and
 * one that cost less marks it cheap for as long unless it is heavy.  What
 * an item will cost is not known before it runs, so its sender's history
 * stands in for it; a sender with none is not known cheap (else a client
 * could open a connection per heavy query).  The items of senders not
 * known cheap run on at most the consumers not kept.
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
/* Caps at n the items of one sender popped and not yet done (0: no cap,
 * the default).  Call it before the first pop. */
void turnqueue_bound_running(struct turnqueue *q, size_t n);
/* Of consumers (the threads that pop), reserved are kept for senders
 * known cheap: an item whose cost (turnqueue_done()) reaches heavy_ns marks
 * its sender heavy for heavy_for_ns after it ends, one that costs less
 * marks it cheap for cheap_for_ns (a heavy mark wins), and the items of
 * senders without a cheap mark are popped only while fewer than consumers
 * - reserved of them run.  A heavy mark should outlast a cheap one: a
 * sender that keeps its cheap mark fresh between dear items gets the kept
 * consumers for one dear item each time its heavy mark runs out. */
struct turn_reserve {
	size_t consumers, reserved;
	uint64_t heavy_ns, heavy_for_ns, cheap_for_ns;
};

/* reserved 0 keeps none (the default); at most consumers - 1 are kept.
 * Call it before the first pop.  No effect without turns. */
void turnqueue_keep_for_light(struct turnqueue *q, const struct turn_reserve *r);
/* Removes the oldest item of the first sender in turn that may run (under
 * the running cap, and known cheap if the consumers not kept are all
 * busy), waiting for one; from is set to its sender.  Returns NULL
 * once the queue is closed and empty. */
void *turnqueue_pop(struct turnqueue *q, struct turn_sender *from);
/* The same for one of the kept consumers: it takes only the items of
 * senders known cheap, and is woken first for them.  Run that many
 * consumers with it and the rest with turnqueue_pop(), and the kept ones
 * can have a CPU priority of their own: the query pool lowers the others',
 * so that a cheap REQ gets a core before the heavy jobs running beside it,
 * not only a thread.  Without a reserve it takes any item. */
void *turnqueue_pop_light(struct turnqueue *q, struct turn_sender *from);
/* The consumer has finished an item that turnqueue_pop() gave it from
 * this sender, at a cost of cost_ns (the query pool gives the thread's CPU
 * time): the sender may have another worked on.  Every popped item needs
 * it, cap or not (a sender's slot stays until then). */
void turnqueue_done(struct turnqueue *q, struct turn_sender from, uint64_t cost_ns);
/* Refuses further pushes and wakes consumers; queued items remain poppable. */
void turnqueue_close(struct turnqueue *q);
/* Items currently queued, over all senders. */
size_t turnqueue_length(struct turnqueue *q);
/* Senders with items queued. */
size_t turnqueue_senders(struct turnqueue *q);
/* Items popped and not yet done. */
size_t turnqueue_running(struct turnqueue *q);
/* Of those, the items popped while their sender was not known cheap. */
size_t turnqueue_running_held(struct turnqueue *q);
/* Senders marked heavy now, and marked cheap (a walk over every sender:
 * for statistics). */
void turnqueue_marked_senders(struct turnqueue *q, size_t *heavy, size_t *cheap);
/* Senders the queue keeps a slot for (items queued or running, or a mark
 * that has not run out yet, or one that has and waits for the sweep at
 * the next push or done, at most a second later): its memory. */
size_t turnqueue_slots(struct turnqueue *q);
/* Items whose cost reached the heavy threshold, since the queue was made. */
size_t turnqueue_heavy_items(struct turnqueue *q);
/* Consumers blocked in turnqueue_pop() or turnqueue_pop_light() now. */
size_t turnqueue_waiting_consumers(struct turnqueue *q);
/* The clock marks and sweeps read, in ns: clock(arg) from now on, or
 * CLOCK_MONOTONIC when clock is NULL (the default).  It must never go
 * back.  For tests, which move time by hand; call before any push. */
void turnqueue_set_clock(struct turnqueue *q, uint64_t (*clock)(void *arg), void *arg);

#endif
