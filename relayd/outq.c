/* outq.c - per-connection outgoing queue with shared bodies (see outq.h). */
#include "outq.h"

#include <stdlib.h>
#include <string.h>

#include "../common/err.h"

struct shared *shared_new(const char *data, size_t len)
{
	struct shared *s = malloc(sizeof(*s) + len);

	if (!s)
		return NULL;
	s->refs = 1;
	s->len = (uint32_t)len;
	s->expiration = 0;
	s->commit_seq = 0;
	s->z = NULL;
	s->zlen = 0;
	s->ztail = '\0';
	s->zstate = 0;
	memcpy(s->data, data, len);
	return s;
}

void shared_unref(struct shared *s)
{
	if (s && --s->refs == 0) {
		free(s->z);
		free(s);
	}
}

size_t out_item_size(const struct out_item *item)
{
	return item->head_len + (item->body ? item->body->len : 0) + (item->tail ? 1 : 0);
}

/* Links item (its next is NULL) at the end of q. */
static void outq_append(struct outq *q, struct out_item *item)
{
	if (q->last)
		q->last->next = item;
	else
		q->first = item;
	q->last = item;
	q->bytes += out_item_size(item);
	q->count++;
}

int outq_push(struct outq *q, char *head, size_t head_len, struct shared *body, char tail)
{
	struct out_item *item = malloc(sizeof(*item));

	if (!item) {
		free(head);
		shared_unref(body);
		return ERR_NOMEM;
	}
	*item = (struct out_item){ NULL, head, (uint32_t)head_len, body, tail };
	outq_append(q, item);
	return 0;
}

struct out_item *outq_pop(struct outq *q)
{
	struct out_item *item = q->first;

	if (!item)
		return NULL;
	q->first = item->next;
	if (!q->first)
		q->last = NULL;
	q->bytes -= out_item_size(item);
	q->count--;
	item->next = NULL;
	return item;
}

void out_item_free(struct out_item *item)
{
	if (!item)
		return;
	free(item->head);
	shared_unref(item->body);
	free(item);
}

void outq_clear(struct outq *q)
{
	struct out_item *item;

	while ((item = outq_pop(q)))
		out_item_free(item);
}

void outq_splice(struct outq *to, struct outq *from)
{
	if (!from->first)
		return;
	if (to->last)
		to->last->next = from->first;
	else
		to->first = from->first;
	to->last = from->last;
	to->bytes += from->bytes;
	to->count += from->count;
	from->first = from->last = NULL;
	from->bytes = 0;
	from->count = 0;
}

size_t outq_drop_if(struct outq *q, bool (*drop)(const struct out_item *item, void *arg), void *arg)
{
	struct outq kept = { 0 };
	struct out_item *item;
	size_t dropped = 0;

	while ((item = outq_pop(q))) {
		if (drop(item, arg)) {
			out_item_free(item);
			dropped++;
		} else {
			outq_append(&kept, item);
		}
	}
	*q = kept;
	return dropped;
}

static bool out_item_expired(const struct out_item *item, void *arg)
{
	int64_t now = *(const int64_t *)arg;

	return item->body && item->body->expiration && item->body->expiration <= now;
}

size_t outq_drop_expired(struct outq *q, int64_t now)
{
	return outq_drop_if(q, out_item_expired, &now);
}
