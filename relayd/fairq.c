/* fairq.c - round-robin queue over senders (see fairq.h). */
#include "fairq.h"

#include <stdbool.h>
#include <stdlib.h>

#include "../common/err.h"

#define FAIRQ_NONE UINT32_MAX

struct fairq_sender {
	struct fairq_item *head, *tail;
	uint32_t next;       /* the next sender in the ring, or FAIRQ_NONE */
	bool in_ring;
	bool express_busy;   /* the express server is handling its item */
	uint64_t held_epoch; /* == fairq.hold_epoch: the primary holds it */
	uint32_t count;      /* items queued */
};

static int fairq_grow(struct fairq *q, uint32_t slot)
{
	uint32_t n = q->nsenders ? q->nsenders : 64;
	struct fairq_sender *grown;

	while (n <= slot)
		n *= 2;
	grown = realloc(q->senders, (size_t)n * sizeof(*grown));
	if (!grown)
		return ERR_NOMEM;
	for (uint32_t i = q->nsenders; i < n; i++)
		grown[i] = (struct fairq_sender){ NULL, NULL, FAIRQ_NONE, false, false, 0, 0 };
	q->senders = grown;
	q->nsenders = n;
	return 0;
}

/* Puts slot at the end of the turn order of its next item's class. */
static void fairq_ring_append(struct fairq *q, uint32_t slot)
{
	struct fairq_sender *s = &q->senders[slot];
	int ring = s->head->urgent;

	s->next = FAIRQ_NONE;
	s->in_ring = true;
	if (q->ring_tail[ring] == FAIRQ_NONE)
		q->ring_head[ring] = slot;
	else
		q->senders[q->ring_tail[ring]].next = slot;
	q->ring_tail[ring] = slot;
}

/* Takes slot, which follows prev (FAIRQ_NONE: it is the head), out of ring. */
static void fairq_ring_remove(struct fairq *q, int ring, uint32_t prev, uint32_t slot)
{
	struct fairq_sender *s = &q->senders[slot];

	if (prev == FAIRQ_NONE)
		q->ring_head[ring] = s->next;
	else
		q->senders[prev].next = s->next;
	if (q->ring_tail[ring] == slot)
		q->ring_tail[ring] = prev;
	s->next = FAIRQ_NONE;
	s->in_ring = false;
}

/* Removes and returns slot's first item (it has one). */
static struct fairq_item *fairq_take(struct fairq *q, uint32_t slot)
{
	struct fairq_sender *s = &q->senders[slot];
	struct fairq_item *item = s->head;

	s->head = item->next;
	if (!s->head)
		s->tail = NULL;
	item->next = NULL;
	s->count--;
	q->count--;
	return item;
}

int fairq_push(struct fairq *q, uint32_t slot, struct fairq_item *item, bool urgent)
{
	struct fairq_sender *s;

	if (slot == FAIRQ_NONE || (slot >= q->nsenders && fairq_grow(q, slot)))
		return ERR_NOMEM;
	s = &q->senders[slot];
	item->next = NULL;
	item->urgent = urgent;
	if (s->tail)
		s->tail->next = item;
	else
		s->head = item;
	s->tail = item;
	if (!s->in_ring && !s->express_busy)
		fairq_ring_append(q, slot);
	s->count++;
	q->count++;
	return 0;
}

struct fairq_item *fairq_pop(struct fairq *q)
{
	int ring = q->ring_head[1] != FAIRQ_NONE;
	uint32_t slot = q->ring_head[ring];
	struct fairq_item *item;

	if (slot == FAIRQ_NONE)
		return NULL;
	fairq_ring_remove(q, ring, FAIRQ_NONE, slot);
	q->senders[slot].held_epoch = q->hold_epoch;
	item = fairq_take(q, slot);
	if (q->senders[slot].head)
		fairq_ring_append(q, slot); /* its next item waits for the others
					       of its class */
	return item;
}

void fairq_release(struct fairq *q)
{
	q->hold_epoch++;
}

/* The first sender of the urgent ring the primary does not hold, and the
 * one before it (FAIRQ_NONE if it is the head); FAIRQ_NONE if none. */
static uint32_t fairq_express_find(const struct fairq *q, uint32_t *prev)
{
	*prev = FAIRQ_NONE;
	for (uint32_t slot = q->ring_head[1]; slot != FAIRQ_NONE; slot = q->senders[slot].next) {
		if (q->senders[slot].held_epoch != q->hold_epoch)
			return slot;
		*prev = slot;
	}
	return FAIRQ_NONE;
}

struct fairq_item *fairq_pop_express(struct fairq *q, uint32_t *slot)
{
	uint32_t prev, found = fairq_express_find(q, &prev);

	if (found == FAIRQ_NONE)
		return NULL;
	fairq_ring_remove(q, 1, prev, found);
	q->senders[found].express_busy = true;
	*slot = found;
	return fairq_take(q, found);
}

void fairq_express_done(struct fairq *q, uint32_t slot)
{
	struct fairq_sender *s = &q->senders[slot];

	s->express_busy = false;
	if (s->head)
		fairq_ring_append(q, slot);
}

bool fairq_express_ready(const struct fairq *q)
{
	uint32_t prev;

	return fairq_express_find(q, &prev) != FAIRQ_NONE;
}

bool fairq_sender_idle(const struct fairq *q, uint32_t slot)
{
	const struct fairq_sender *s;

	if (slot >= q->nsenders)
		return true;
	s = &q->senders[slot];
	return !s->count && !s->express_busy && s->held_epoch != q->hold_epoch;
}

uint32_t fairq_pending(const struct fairq *q, uint32_t slot)
{
	return slot < q->nsenders ? q->senders[slot].count : 0;
}

struct fairq_item *fairq_last(const struct fairq *q, uint32_t slot)
{
	return slot < q->nsenders ? q->senders[slot].tail : NULL;
}

void fairq_free(struct fairq *q)
{
	free(q->senders);
	*q = (struct fairq)FAIRQ_INIT;
}
