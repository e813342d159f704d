/*
 * queue.h - a bounded FIFO of pointers between stored's threads.
 *
 * Any thread may push; any thread may pop (stored uses one consumer per
 * queue, except the query pool).  A full queue refuses the push rather than
 * blocking the pusher: the caller answers its client with an error instead
 * of stalling the rpc thread.  queue_close() wakes every waiting consumer.
 */
#ifndef STORED_QUEUE_H
#define STORED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct queue;

/* Creates a queue holding at most capacity items, or NULL (no memory). */
struct queue *queue_new(size_t capacity);
/* Frees the queue (not the items still in it).  NULL-safe. */
void queue_free(struct queue *q);
/* Appends item.  Returns 0, ERR_FULL, or ERR_CLOSED after queue_close(). */
int queue_push(struct queue *q, void *item);
/* Appends items[0..n) in order under one lock and one wake-up, as many as
 * fit.  Returns how many were appended (0 after queue_close()).  A producer
 * with many items for a consumer of higher priority uses this: pushing them
 * one by one lets the consumer preempt it at every push to take one item
 * (bench/RESULTS.md, item 40). */
size_t queue_push_many(struct queue *q, void *const *items, size_t n);
/* Removes the oldest item, waiting for one.  Returns NULL once the queue is
 * closed and empty. */
void *queue_pop(struct queue *q);
/* Removes the oldest item, waiting at most timeout_ms.  Returns NULL on
 * timeout or once the queue is closed and empty (queue_closed tells). */
void *queue_pop_timed(struct queue *q, int timeout_ms);
/* True after queue_close(). */
bool queue_closed(struct queue *q);
/* Removes the oldest item if there is one, else returns NULL at once. */
void *queue_pop_nowait(struct queue *q);
/* Refuses further pushes and wakes consumers; queued items remain poppable. */
void queue_close(struct queue *q);
/* Items currently queued. */
size_t queue_length(struct queue *q);

#endif
