/* turnqueue.c - per-sender round robin queue (see turnqueue.h). */
#include "turnqueue.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "hmap.h"

struct turn_item {
	struct turn_item *next;
	void *item;
};

/* A sender with items queued or being worked on, or with a recent cost
 * mark; in the turn order while it has items queued, freed once it has
 * none queued, none running and no mark (turn_sweep() frees those kept
 * only for a mark once it runs out, as the sender may never come back). */
struct turn_slot {
	uint8_t key[10];             /* worker, then conn_id, little-endian */
	struct turn_sender who;
	struct turn_item *head, *tail;
	size_t n;                    /* items queued */
	size_t running;              /* popped, not done */
	size_t running_held;         /* of those, popped while not known cheap */
	uint64_t heavy_until;        /* CLOCK_MONOTONIC ns: an item before it cost */
	uint64_t cheap_until;        /*   the threshold or more; below it */
	struct turn_slot *next_turn; /* the sender after it in the turn order */
};

/* How often, at most, the slots kept only for a mark are looked at,
 * and how many one look frees (the map cannot change while it is walked;
 * a full batch looks again at the next call). */
#define TURN_SWEEP_NS 1000000000ull
#define TURN_SWEEP_BATCH 64

/* A consumer waiting in turnqueue_pop(), on a stack of them: the one woken
 * is the last to have come back, whose SQLite connection (the query pool's
 * consumers each own one) has the warmest caches and page tables.  One
 * shared condition variable would wake them in turn, spreading a trickle
 * of queries over every thread's cold caches (bench/RESULTS.md item 45). */
struct turn_waiter {
	pthread_cond_t wake;
	struct turn_waiter *next;
	bool woken;
};

/* Which consumers an item may go to: a kept one (turnqueue_pop_light())
 * takes only the items of senders known cheap. */
enum turn_class { TURN_ANY, TURN_LIGHT };

struct turnqueue {
	pthread_mutex_t lock;
	struct turn_waiter *idle;   /* the last consumer to wait first */
	struct turn_waiter *idle_light; /* the same, of the kept consumers */
	struct hmap senders;        /* key -> struct turn_slot */
	struct turn_slot *turn_head, *turn_tail;
	size_t capacity, per_sender, count;
	size_t running_cap;         /* 0: none */
	size_t running, waiting;    /* items running; senders in the turn order */
	size_t held_cap;            /* items of senders not known cheap running at once;
				     * 0: no consumer kept for cheap ones */
	size_t running_held;        /* of the running, those of such senders */
	size_t heavy_items;         /* items that cost heavy_ns or more, ever */
	uint64_t heavy_ns, heavy_for_ns, cheap_for_ns;
	uint64_t next_sweep;        /* ns on the queue's clock */
	uint64_t (*clock)(void *);  /* NULL: CLOCK_MONOTONIC (turnqueue_set_clock) */
	void *clock_arg;
	size_t consumers_waiting;   /* blocked in turn_pop */
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
	return q;
}

void turnqueue_free(struct turnqueue *q)
{
	struct turn_slot *s;
	size_t pos = 0;

	if (!q)
		return;
	/* Every slot is in the map, those only running too. */
	while ((s = hmap_next(&q->senders, &pos))) {
		while (s->head) {
			struct turn_item *it = s->head;

			s->head = it->next;
			free(it);
		}
		free(s);
	}
	hmap_free(&q->senders);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Now on the queue's clock in ns (CLOCK_MONOTONIC to the microsecond
 * unless set), when there are marks to compare it with (0 otherwise: no
 * slot is then ever marked). */
static uint64_t turn_now(const struct turnqueue *q)
{
	if (!q->held_cap)
		return 0;
	return q->clock ? q->clock(q->clock_arg) : (uint64_t)deadline_now_us() * 1000;
}

static bool turn_marked(const struct turn_slot *s, uint64_t now)
{
	return s->heavy_until > now || s->cheap_until > now;
}

/* Whether s's items are held to held_cap: s is heavy, or not yet known
 * cheap (a new sender's first item may be as dear as any: one client
 * per heavy query must not pass as cheap). */
static bool turn_held(const struct turnqueue *q, const struct turn_slot *s, uint64_t now)
{
	return q->held_cap && (s->heavy_until > now || s->cheap_until <= now);
}

static void turn_key(uint8_t key[10], struct turn_sender from)
{
	for (int i = 0; i < 2; i++)
		key[i] = (uint8_t)(from.worker >> (8 * i));
	for (int i = 0; i < 8; i++)
		key[2 + i] = (uint8_t)(from.conn_id >> (8 * i));
}

/* Wakes the consumer of *stack that waited last, if any.  The caller holds
 * the lock. */
static void turn_wake_one(struct turn_waiter **stack)
{
	struct turn_waiter *w = *stack;

	if (!w)
		return;
	*stack = w->next;
	w->woken = true;
	pthread_cond_signal(&w->wake);
}

static void turn_wake_all(struct turnqueue *q)
{
	while (q->idle)
		turn_wake_one(&q->idle);
	while (q->idle_light)
		turn_wake_one(&q->idle_light);
}

/* Wakes a consumer for s's first item: a kept one if s is known cheap and
 * one waits (it runs at the higher priority), else any other. */
static void turn_wake_for(struct turnqueue *q, const struct turn_slot *s, uint64_t now)
{
	if (q->idle_light && !turn_held(q, s, now))
		turn_wake_one(&q->idle_light);
	else
		turn_wake_one(&q->idle);
}

static void turn_append(struct turnqueue *q, struct turn_slot *s)
{
	s->next_turn = NULL;
	q->waiting++;
	if (q->turn_tail)
		q->turn_tail->next_turn = s;
	else
		q->turn_head = s;
	q->turn_tail = s;
}

/* The sender's slot, if it has one.  The caller holds the lock. */
static struct turn_slot *turn_slot_find(struct turnqueue *q, struct turn_sender from)
{
	uint8_t key[10];

	turn_key(key, q->turns ? from : (struct turn_sender){ 0, 0 });
	return hmap_get(&q->senders, key, sizeof(key));
}

/* The sender's slot, made if it had none (with nothing queued, so not yet
 * in the turn order); NULL without memory.  The caller holds the lock. */
static struct turn_slot *turn_slot_for(struct turnqueue *q, struct turn_sender from)
{
	struct turn_slot *s = turn_slot_find(q, from);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->who = q->turns ? from : (struct turn_sender){ 0, 0 };
	turn_key(s->key, s->who);
	if (hmap_put(&q->senders, s->key, sizeof(s->key), s)) {
		free(s);
		return NULL;
	}
	return s;
}

/* Frees s if it has nothing queued, nothing running and no mark.
 * The caller holds the lock, and s is not in the turn order unless it has
 * items queued. */
static void turn_slot_release(struct turnqueue *q, struct turn_slot *s, uint64_t now)
{
	if (s->n || s->running || turn_marked(s, now))
		return;
	hmap_remove(&q->senders, s->key, sizeof(s->key));
	free(s);
}

/* Frees the slots kept only for a mark that has run out: their
 * connections may be gone for good.  The caller holds the lock. */
static void turn_sweep(struct turnqueue *q, uint64_t now)
{
	struct turn_slot *gone[TURN_SWEEP_BATCH], *s;
	size_t pos = 0, n = 0;

	if (!q->held_cap || now < q->next_sweep)
		return;
	while (n < TURN_SWEEP_BATCH && (s = hmap_next(&q->senders, &pos)))
		if (!s->n && !s->running && !turn_marked(s, now))
			gone[n++] = s;
	for (size_t i = 0; i < n; i++)
		turn_slot_release(q, gone[i], now);
	q->next_sweep = n == TURN_SWEEP_BATCH ? now : now + TURN_SWEEP_NS;
}

/* Whether s's first item may be popped now: s is under the running cap,
 * and known cheap or the consumers not kept are not all busy. */
static bool turn_may_run(const struct turnqueue *q, const struct turn_slot *s, uint64_t now)
{
	if (q->running_cap && s->running >= q->running_cap)
		return false;
	return q->running_held < q->held_cap || !turn_held(q, s, now);
}

int turnqueue_push(struct turnqueue *q, struct turn_sender from, void *item)
{
	struct turn_item *it = malloc(sizeof(*it));
	struct turn_slot *s = NULL;
	uint64_t now;
	int rc = 0;

	if (!it)
		return ERR_NOMEM;
	it->next = NULL;
	it->item = item;
	pthread_mutex_lock(&q->lock);
	now = turn_now(q);
	turn_sweep(q, now);
	if (q->closed)
		rc = ERR_CLOSED;
	else if (q->count == q->capacity)
		rc = ERR_FULL;
	else if (!(s = turn_slot_for(q, from)))
		rc = ERR_NOMEM;
	else if (q->turns && s->n >= q->per_sender)
		rc = ERR_TOOBIG; /* s has items, so it stays */
	if (rc == 0) {
		if (s->n == 0)
			turn_append(q, s);
		if (s->tail)
			s->tail->next = it;
		else
			s->head = it;
		s->tail = it;
		s->n++;
		q->count++;
		/* An item that may not run yet wakes no one: it becomes runnable
		 * in turnqueue_done(), which wakes a consumer for it.  Waking one
		 * anyway would have it walk every waiting sender for nothing, and
		 * after a stored restart each of thousands of connections' resumes
		 * is such an item (none of them known cheap yet). */
		if (turn_may_run(q, s, now))
			turn_wake_for(q, s, now);
	}
	if (rc && s)
		turn_slot_release(q, s, now); /* made for this push, or kept */
	pthread_mutex_unlock(&q->lock);
	if (rc)
		free(it);
	return rc;
}

/* The first sender in the turn order that may run, and the one before it
 * (NULL if it is first); NULL if there is none.  At most one sender per
 * consumer is at the running cap; senders not known cheap are skipped only
 * while their consumers are all busy, and then the walk is as long as
 * those waiting, a pointer step each. */
static struct turn_slot *turn_next_runnable(struct turnqueue *q, uint64_t now,
					    enum turn_class class, struct turn_slot **before)
{
	*before = NULL;
	for (struct turn_slot *s = q->turn_head; s; *before = s, s = s->next_turn)
		if (turn_may_run(q, s, now) && (class == TURN_ANY || !turn_held(q, s, now)))
			return s;
	return NULL;
}

/* Takes s's first item; s leaves the turn order and goes to its back if it
 * has items left, and counts the item as running (and as held if s is).
 * The caller holds the lock. */
static void *turn_take_locked(struct turnqueue *q, struct turn_slot *s, struct turn_slot *before,
			      uint64_t now)
{
	struct turn_item *it = s->head;
	void *item = it->item;

	s->head = it->next;
	if (!s->head)
		s->tail = NULL;
	s->n--;
	free(it);
	q->count--;
	if (before)
		before->next_turn = s->next_turn;
	else
		q->turn_head = s->next_turn;
	if (q->turn_tail == s)
		q->turn_tail = before;
	q->waiting--;
	s->running++; /* so s stays until turnqueue_done() */
	q->running++;
	if (turn_held(q, s, now)) {
		s->running_held++;
		q->running_held++;
	}
	if (s->head)
		turn_append(q, s);
	return item;
}

void turnqueue_bound_running(struct turnqueue *q, size_t n)
{
	pthread_mutex_lock(&q->lock);
	q->running_cap = q->turns ? n : 0; /* first come has one sender */
	pthread_mutex_unlock(&q->lock);
}

void turnqueue_keep_for_light(struct turnqueue *q, const struct turn_reserve *r)
{
	size_t reserved = r->reserved;

	pthread_mutex_lock(&q->lock);
	if (reserved >= r->consumers)
		reserved = r->consumers ? r->consumers - 1 : 0;
	q->held_cap = q->turns && reserved ? r->consumers - reserved : 0;
	q->heavy_ns = r->heavy_ns;
	q->heavy_for_ns = r->heavy_for_ns;
	q->cheap_for_ns = r->cheap_for_ns;
	pthread_mutex_unlock(&q->lock);
}

static void *turn_pop(struct turnqueue *q, struct turn_sender *from, enum turn_class class)
{
	struct turn_waiter **stack = class == TURN_LIGHT ? &q->idle_light : &q->idle;
	struct turn_slot *s, *before;
	void *item = NULL;
	uint64_t now;

	pthread_mutex_lock(&q->lock);
	/* A mark that runs out while a consumer waits does not wake it; the
	 * next push or done does, and looks again.  The take below uses the
	 * same now as the look, so a mark running out in between cannot count
	 * an item as held that was let run as cheap (running_held past its cap). */
	while (!(s = turn_next_runnable(q, now = turn_now(q), class, &before)) &&
	       !(q->closed && q->count == 0)) {
		struct turn_waiter w = { .next = *stack };
		struct turn_slot *other;

		/* A sender's cheap mark can run out between the push that woke a
		 * kept consumer and its look: the item is then for the others,
		 * and one of them must hear of it. */
		if (class == TURN_LIGHT && q->idle && turn_next_runnable(q, now, TURN_ANY, &other))
			turn_wake_one(&q->idle);
		pthread_cond_init(&w.wake, NULL);
		*stack = &w;
		q->consumers_waiting++;
		while (!w.woken) /* only a waker takes w off the stack */
			pthread_cond_wait(&w.wake, &q->lock);
		q->consumers_waiting--;
		pthread_cond_destroy(&w.wake);
	}
	if (s) {
		if (from)
			*from = s->who;
		item = turn_take_locked(q, s, before, now);
	}
	pthread_mutex_unlock(&q->lock);
	return item;
}

void *turnqueue_pop(struct turnqueue *q, struct turn_sender *from)
{
	return turn_pop(q, from, TURN_ANY);
}

void *turnqueue_pop_light(struct turnqueue *q, struct turn_sender *from)
{
	return turn_pop(q, from, TURN_LIGHT);
}

/* Counts s's finished item, and marks s heavy or cheap by its cost. */
static void turn_count_done(struct turnqueue *q, struct turn_slot *s, uint64_t cost_ns,
			    uint64_t now)
{
	bool was_held = s->running_held > 0;
	bool heavy = q->heavy_ns && cost_ns >= q->heavy_ns;

	s->running--;
	q->running--;
	if (was_held) {
		s->running_held--;
		q->running_held--;
	}
	q->heavy_items += heavy;
	if (q->held_cap && heavy)
		s->heavy_until = now + q->heavy_for_ns;
	else if (q->held_cap)
		s->cheap_until = now + q->cheap_for_ns;
	/* Its own next item may run now, and so may another held sender's
	 * (on a consumer not kept). */
	if (s->n && (q->running_cap || q->held_cap))
		turn_wake_for(q, s, now);
	if (was_held && q->count)
		turn_wake_one(&q->idle);
}

void turnqueue_done(struct turnqueue *q, struct turn_sender from, uint64_t cost_ns)
{
	struct turn_slot *s;
	uint64_t now;

	pthread_mutex_lock(&q->lock);
	now = turn_now(q);
	s = turn_slot_find(q, from);
	if (s && s->running) {
		turn_count_done(q, s, cost_ns, now);
		turn_slot_release(q, s, now);
	}
	turn_sweep(q, now);
	/* After the close, consumers waiting for a capped sender must see
	 * the queue drain, to return NULL. */
	if (q->closed)
		turn_wake_all(q);
	pthread_mutex_unlock(&q->lock);
}

void turnqueue_close(struct turnqueue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	turn_wake_all(q);
	pthread_mutex_unlock(&q->lock);
}

/* One of the counters, read under the lock. */
static size_t turn_read(struct turnqueue *q, const size_t *counter)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = *counter;
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t turnqueue_length(struct turnqueue *q)
{
	return turn_read(q, &q->count);
}

size_t turnqueue_senders(struct turnqueue *q)
{
	return turn_read(q, &q->waiting);
}

size_t turnqueue_running(struct turnqueue *q)
{
	return turn_read(q, &q->running);
}

size_t turnqueue_running_held(struct turnqueue *q)
{
	return turn_read(q, &q->running_held);
}

void turnqueue_marked_senders(struct turnqueue *q, size_t *heavy, size_t *cheap)
{
	struct turn_slot *s;
	size_t pos = 0;
	uint64_t now;

	*heavy = *cheap = 0;
	pthread_mutex_lock(&q->lock);
	now = turn_now(q);
	while (q->held_cap && (s = hmap_next(&q->senders, &pos))) {
		*heavy += s->heavy_until > now;
		*cheap += s->heavy_until <= now && s->cheap_until > now;
	}
	pthread_mutex_unlock(&q->lock);
}

size_t turnqueue_slots(struct turnqueue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = hmap_count(&q->senders);
	pthread_mutex_unlock(&q->lock);
	return n;
}

size_t turnqueue_heavy_items(struct turnqueue *q)
{
	return turn_read(q, &q->heavy_items);
}

size_t turnqueue_waiting_consumers(struct turnqueue *q)
{
	return turn_read(q, &q->consumers_waiting);
}

void turnqueue_set_clock(struct turnqueue *q, uint64_t (*clock)(void *arg), void *arg)
{
	pthread_mutex_lock(&q->lock);
	q->clock = clock;
	q->clock_arg = arg;
	pthread_mutex_unlock(&q->lock);
}
