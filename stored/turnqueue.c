/* turnqueue.c - per-sender round robin queue (see turnqueue.h). */
#include "turnqueue.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "hmap.h"

struct turn_item {
	struct turn_item *next;
	void *item;
};

/* A sender with items queued; freed when its last item is popped. */
struct turn_slot {
	uint8_t key[10];             /* worker, then conn_id, little-endian */
	struct turn_item *head, *tail;
	size_t n;                    /* items queued */
	struct turn_slot *next_turn; /* the sender after it in the turn order */
};

struct turnqueue {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	struct hmap senders;        /* key -> struct turn_slot */
	struct turn_slot *turn_head, *turn_tail;
	size_t capacity, per_sender, count;
	bool turns;                 /* false: one sender for all (first come, first served) */
	bool closed;
};

struct turnqueue *turnqueue_new(size_t capacity, size_t per_sender, bool turns)
{
	struct turnqueue *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->capacity = capacity;
	q->per_sender = per_sender;
	q->turns = turns;
	/* A fixed hash key: senders are named by stored and its workers
	 * (connection slots), never chosen by a client. */
	hmap_init(&q->senders, 0x7475726e71756575ull, 0x73656e6465727321ull);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	return q;
}

void turnqueue_free(struct turnqueue *q)
{
	if (!q)
		return;
	while (q->turn_head) {
		struct turn_slot *s = q->turn_head;

		q->turn_head = s->next_turn;
		while (s->head) {
			struct turn_item *it = s->head;

			s->head = it->next;
			free(it);
		}
		free(s);
	}
	hmap_free(&q->senders);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->nonempty);
	free(q);
}

static void turn_key(uint8_t key[10], struct turn_sender from)
{
	for (int i = 0; i < 2; i++)
		key[i] = (uint8_t)(from.worker >> (8 * i));
	for (int i = 0; i < 8; i++)
		key[2 + i] = (uint8_t)(from.conn_id >> (8 * i));
}

static void turn_append(struct turnqueue *q, struct turn_slot *s)
{
	s->next_turn = NULL;
	if (q->turn_tail)
		q->turn_tail->next_turn = s;
	else
		q->turn_head = s;
	q->turn_tail = s;
}

/* The sender's slot, made and put last in the turn order if it had none;
 * NULL without memory.  The caller holds the lock. */
static struct turn_slot *turn_slot_for(struct turnqueue *q, struct turn_sender from)
{
	uint8_t key[10];
	struct turn_slot *s;

	turn_key(key, q->turns ? from : (struct turn_sender){ 0, 0 });
	s = hmap_get(&q->senders, key, sizeof(key));
	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s->key, key, sizeof(key));
	if (hmap_put(&q->senders, s->key, sizeof(s->key), s)) {
		free(s);
		return NULL;
	}
	turn_append(q, s);
	return s;
}

int turnqueue_push(struct turnqueue *q, struct turn_sender from, void *item)
{
	struct turn_item *it = malloc(sizeof(*it));
	struct turn_slot *s = NULL;
	int rc = 0;

	if (!it)
		return ERR_NOMEM;
	it->next = NULL;
	it->item = item;
	pthread_mutex_lock(&q->lock);
	if (q->closed)
		rc = ERR_CLOSED;
	else if (q->count == q->capacity)
		rc = ERR_FULL;
	else if (!(s = turn_slot_for(q, from)))
		rc = ERR_NOMEM;
	else if (q->turns && s->n >= q->per_sender)
		rc = ERR_TOOBIG; /* s has items, so it stays */
	if (rc == 0) {
		if (s->tail)
			s->tail->next = it;
		else
			s->head = it;
		s->tail = it;
		s->n++;
		q->count++;
		pthread_cond_signal(&q->nonempty);
	}
	pthread_mutex_unlock(&q->lock);
	if (rc)
		free(it);
	return rc;
}

/* Takes the first item of the sender whose turn it is; that sender goes to
 * the back of the turn order, or away if it has nothing left.  The caller
 * holds the lock and has checked that the queue is not empty. */
static void *turn_take_locked(struct turnqueue *q)
{
	struct turn_slot *s = q->turn_head;
	struct turn_item *it = s->head;
	void *item = it->item;

	s->head = it->next;
	if (!s->head)
		s->tail = NULL;
	s->n--;
	free(it);
	q->count--;
	q->turn_head = s->next_turn;
	if (!q->turn_head)
		q->turn_tail = NULL;
	if (s->head) {
		turn_append(q, s);
	} else {
		hmap_remove(&q->senders, s->key, sizeof(s->key));
		free(s);
	}
	return item;
}

void *turnqueue_pop(struct turnqueue *q)
{
	void *item = NULL;

	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closed)
		pthread_cond_wait(&q->nonempty, &q->lock);
	if (q->count)
		item = turn_take_locked(q);
	pthread_mutex_unlock(&q->lock);
	return item;
}

void turnqueue_close(struct turnqueue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
}

size_t turnqueue_length(struct turnqueue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->count;
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t turnqueue_senders(struct turnqueue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = hmap_count(&q->senders);
	pthread_mutex_unlock(&q->lock);
	return n;
}
