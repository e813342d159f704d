/* conn.c - connection table, subscriptions and pending events (see conn.h). */
#include "conn.h"

#include <stdlib.h>
#include <string.h>

#include "../common/err.h"

struct conn_slot {
	struct conn *conn;
	uint32_t generation;
	uint32_t next_free; /* index + 1 of the next free slot; 0 ends the list */
};

struct conn_table {
	struct conn_slot *slots;
	uint32_t nslots, cap;
	uint32_t free_head; /* index + 1; 0: none */
	uint32_t open;
	uint32_t generation_base; /* a new slot's first generation follows it */
	unsigned char *scratch;
	size_t scratch_len;
};

struct conn_table *conn_table_new(uint32_t generation_base)
{
	struct conn_table *t = calloc(1, sizeof(struct conn_table));

	if (t)
		t->generation_base = generation_base;
	return t;
}

static void sub_free(struct sub *s)
{
	filters_free(s->filters, s->nfilters);
	outq_clear(&s->held);
	lost_ranges_free(&s->lost);
	sent_ids_clear(&s->sent);
	free(s);
}

static void conn_free(struct conn *c)
{
	for (uint32_t i = 0; i < c->nsubs; i++)
		sub_free(c->subs[i]);
	free(c->subs);
	free(c->pending);
	count_waits_free(&c->counts);
	buf_free(&c->rx);
	buf_free(&c->zrx);
	outq_clear(&c->out);
	free(c);
}

void conn_table_free(struct conn_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nslots; i++)
		if (t->slots[i].conn)
			conn_free(t->slots[i].conn);
	free(t->slots);
	free(t->scratch);
	free(t);
}

static int conn_take_slot(struct conn_table *t, uint32_t *slot)
{
	if (t->free_head) {
		*slot = t->free_head - 1;
		t->free_head = t->slots[*slot].next_free;
		return 0;
	}
	if (t->nslots == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		struct conn_slot *grown = realloc(t->slots, cap * sizeof(*grown));

		if (!grown)
			return ERR_NOMEM;
		memset(grown + t->cap, 0, (cap - t->cap) * sizeof(*grown));
		for (uint32_t i = t->cap; i < cap; i++)
			grown[i].generation = t->generation_base;
		t->slots = grown;
		t->cap = cap;
	}
	*slot = t->nslots++;
	return 0;
}

struct conn *conn_open(struct conn_table *t, struct lws *wsi)
{
	struct conn *c = calloc(1, sizeof(*c));
	uint32_t slot;

	if (!c || conn_take_slot(t, &slot)) {
		free(c);
		return NULL;
	}
	/* Never generation 0, so no id is 0 (ws.c's "no connection"), also
	 * after 2^32 connections in one slot. */
	if (++t->slots[slot].generation == 0)
		t->slots[slot].generation = 1;
	t->slots[slot].conn = c;
	c->id = (uint64_t)t->slots[slot].generation << 32 | slot;
	c->wsi = wsi;
	t->open++;
	return c;
}

void conn_close(struct conn_table *t, struct conn *c)
{
	uint32_t slot = conn_id_slot(c->id);

	t->slots[slot].conn = NULL;
	t->slots[slot].next_free = t->free_head;
	t->free_head = slot + 1;
	t->open--;
	conn_free(c);
}

bool conn_set_closing(struct conn *c)
{
	if (c->closing)
		return false;
	c->closing = true;
	outq_clear(&c->out);
	return true;
}

struct conn *conn_find(struct conn_table *t, uint64_t id)
{
	uint32_t slot = conn_id_slot(id);
	struct conn *c;

	if (slot >= t->nslots)
		return NULL;
	c = t->slots[slot].conn;
	return c && c->id == id ? c : NULL;
}

struct conn *conn_in_slot(struct conn_table *t, uint32_t slot)
{
	return slot < t->nslots ? t->slots[slot].conn : NULL;
}

uint32_t conn_id_slot(uint64_t id)
{
	return (uint32_t)(id & 0xffffffffu);
}

uint32_t conn_count(const struct conn_table *t)
{
	return t->open;
}

void conn_foreach(struct conn_table *t, void (*fn)(struct conn *c, void *arg), void *arg)
{
	for (uint32_t i = 0; i < t->nslots; i++)
		if (t->slots[i].conn)
			fn(t->slots[i].conn, arg);
}

struct sub *conn_sub_find(struct conn *c, const char *id, size_t len)
{
	for (uint32_t i = 0; i < c->nsubs; i++)
		if (c->subs[i]->id_len == len && memcmp(c->subs[i]->id, id, len) == 0)
			return c->subs[i];
	return NULL;
}

struct sub *conn_sub_find_serial(struct conn *c, uint32_t serial)
{
	for (uint32_t i = 0; i < c->nsubs; i++)
		if (c->subs[i]->serial == serial)
			return c->subs[i];
	return NULL;
}

uint32_t conn_sub_next_serial(struct conn *c, uint32_t *counter)
{
	do
		++*counter;
	while (*counter == 0 || conn_sub_find_serial(c, *counter));
	return *counter;
}

struct sub *conn_sub_add(struct conn *c, const char *id, size_t len, uint32_t serial,
			 struct filter *filters, uint32_t nfilters)
{
	struct sub *s = calloc(1, sizeof(*s));

	if (s && c->nsubs == c->subs_cap) {
		uint32_t cap = c->subs_cap ? c->subs_cap * 2 : 4;
		struct sub **grown = realloc(c->subs, cap * sizeof(*grown));

		if (grown) {
			c->subs = grown;
			c->subs_cap = cap;
		}
	}
	if (!s || c->nsubs == c->subs_cap || len >= sizeof(s->id)) {
		free(s);
		filters_free(filters, nfilters);
		return NULL;
	}
	memcpy(s->id, id, len);
	s->id_len = (uint32_t)len;
	s->serial = serial;
	s->filters = filters;
	s->nfilters = nfilters;
	c->subs[c->nsubs++] = s;
	return s;
}

void conn_sub_remove(struct conn *c, struct sub *s)
{
	for (uint32_t i = 0; i < c->nsubs; i++) {
		if (c->subs[i] == s) {
			c->subs[i] = c->subs[--c->nsubs];
			sub_free(s);
			return;
		}
	}
}

static void conn_sub_count(struct conn *c, void *arg)
{
	*(uint32_t *)arg += c->nsubs;
}

uint32_t conn_sub_total(struct conn_table *t)
{
	uint32_t n = 0;

	conn_foreach(t, conn_sub_count, &n);
	return n;
}

int conn_pending_add(struct conn *c, uint32_t request_id, const uint8_t id[32], int64_t deadline)
{
	struct pending_event *p;

	if (c->npending == c->pending_cap) {
		uint32_t cap = c->pending_cap ? c->pending_cap * 2 : 8;
		struct pending_event *grown = realloc(c->pending, cap * sizeof(*grown));

		if (!grown)
			return ERR_NOMEM;
		c->pending = grown;
		c->pending_cap = cap;
	}
	p = &c->pending[c->npending++];
	p->request_id = request_id;
	memcpy(p->id, id, 32);
	p->deadline_ms = deadline;
	return 0;
}

int conn_pending_take(struct conn *c, uint32_t request_id, struct pending_event *out)
{
	for (uint32_t i = 0; i < c->npending; i++) {
		if (c->pending[i].request_id == request_id) {
			*out = c->pending[i];
			/* Keep arrival order: timeouts sweep from the front. */
			memmove(&c->pending[i], &c->pending[i + 1],
				(c->npending - i - 1) * sizeof(*c->pending));
			c->npending--;
			return 0;
		}
	}
	return ERR_NOTFOUND;
}

unsigned char *conn_scratch(struct conn_table *t, size_t len)
{
	if (len > t->scratch_len) {
		unsigned char *grown = realloc(t->scratch, len);

		if (!grown)
			return NULL;
		t->scratch = grown;
		t->scratch_len = len;
	}
	return t->scratch;
}
