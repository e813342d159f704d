/* queue.c - bounded pointer FIFO with one mutex per queue (see queue.h). */
#include "queue.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/err.h"

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	void **items;
	size_t capacity, head, count;
	bool closed;
};

struct queue *queue_new(size_t capacity)
{
	struct queue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->items = calloc(capacity, sizeof(void *));
	if (!q->items) {
		free(q);
		return NULL;
	}
	q->capacity = capacity;
	pthread_mutex_init(&q->lock, NULL);
	if (deadline_cond_init(&q->nonempty)) { /* queue_pop_timed() waits on CLOCK_MONOTONIC */
		pthread_mutex_destroy(&q->lock);
		free(q->items);
		free(q);
		return NULL;
	}
	return q;
}

void queue_free(struct queue *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->nonempty);
	free(q->items);
	free(q);
}

/* Appends item if there is room; the caller holds the lock. */
static bool queue_append_locked(struct queue *q, void *item)
{
	if (q->count == q->capacity)
		return false;
	q->items[(q->head + q->count) % q->capacity] = item;
	q->count++;
	return true;
}

int queue_push(struct queue *q, void *item)
{
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	if (q->closed)
		rc = ERR_CLOSED;
	else if (!queue_append_locked(q, item))
		rc = ERR_FULL;
	else
		pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
	return rc;
}

size_t queue_push_many(struct queue *q, void *const *items, size_t n)
{
	size_t done = 0;

	pthread_mutex_lock(&q->lock);
	if (!q->closed) {
		while (done < n && queue_append_locked(q, items[done]))
			done++;
		/* Every consumer may take part of them (the query pool has several). */
		if (done)
			pthread_cond_broadcast(&q->nonempty);
	}
	pthread_mutex_unlock(&q->lock);
	return done;
}

static void *queue_take_locked(struct queue *q)
{
	void *item = q->items[q->head];

	q->head = (q->head + 1) % q->capacity;
	q->count--;
	return item;
}

void *queue_pop(struct queue *q)
{
	void *item = NULL;

	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closed)
		pthread_cond_wait(&q->nonempty, &q->lock);
	if (q->count)
		item = queue_take_locked(q);
	pthread_mutex_unlock(&q->lock);
	return item;
}

void *queue_pop_timed(struct queue *q, int timeout_ms)
{
	struct timespec deadline;
	void *item = NULL;

	deadline_after_ms(&deadline, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closed)
		if (pthread_cond_timedwait(&q->nonempty, &q->lock, &deadline))
			break;
	if (q->count)
		item = queue_take_locked(q);
	pthread_mutex_unlock(&q->lock);
	return item;
}

bool queue_closed(struct queue *q)
{
	bool closed;

	pthread_mutex_lock(&q->lock);
	closed = q->closed;
	pthread_mutex_unlock(&q->lock);
	return closed;
}

void *queue_pop_nowait(struct queue *q)
{
	void *item = NULL;

	pthread_mutex_lock(&q->lock);
	if (q->count)
		item = queue_take_locked(q);
	pthread_mutex_unlock(&q->lock);
	return item;
}

void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
}

size_t queue_length(struct queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->count;
	pthread_mutex_unlock(&q->lock);
	return n;
}
