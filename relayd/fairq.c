/* fairq.c - round-robin queue over senders (see fairq.h). */
#include "fairq.h"

#include <stdbool.h>
#include <stdlib.h>

#include "../common/err.h"

#define FAIRQ_NONE UINT32_MAX

struct fairq_sender {
	struct fairq_item *head, *tail;
	uint32_t next; /* the next sender in the ring, or FAIRQ_NONE */
	bool in_ring;
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
		grown[i] = (struct fairq_sender){ NULL, NULL, FAIRQ_NONE, false };
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
	if (!s->in_ring)
		fairq_ring_append(q, slot);
	q->count++;
	return 0;
}

struct fairq_item *fairq_pop(struct fairq *q)
{
	int ring = q->ring_head[1] != FAIRQ_NONE;
	uint32_t slot = q->ring_head[ring];
	struct fairq_sender *s;
	struct fairq_item *item;

	if (slot == FAIRQ_NONE)
		return NULL;
	s = &q->senders[slot];
	q->ring_head[ring] = s->next;
	if (q->ring_head[ring] == FAIRQ_NONE)
		q->ring_tail[ring] = FAIRQ_NONE;
	s->in_ring = false;
	item = s->head;
	s->head = item->next;
	if (!s->head)
		s->tail = NULL;
	else
		fairq_ring_append(q, slot); /* its next item waits for the others
					       of its class */
	item->next = NULL;
	q->count--;
	return item;
}

void fairq_free(struct fairq *q)
{
	free(q->senders);
	*q = (struct fairq)FAIRQ_INIT;
}
