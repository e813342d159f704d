/*
 * subidx.c - the inverted index of live subscriptions (see subidx.h).
 *
 * Layout.  A subscription (struct sub) is one allocation holding its name,
 * one struct fent per filter and one struct iref per index entry.  Each
 * filter is filed under one kind of key, chosen by plan_filter(): every id,
 * every author, every value of one tag, every kind, or the match-all bucket.
 * A bucket is an array of (filter, which iref) pairs and each iref remembers
 * its bucket and position, so removing a filter is a swap-with-last per
 * entry: O(own entries), whatever the size of the index.
 *
 * Keys live in separate maps (ids, authors, kinds, one per tag letter) rather
 * than one map of prefixed keys, so subidx_match() looks up the event's own
 * bytes in place and allocates nothing.
 *
 * Subscriptions are found by name in `subs` (key: worker, conn_id, sub_id),
 * and are linked into their connection's list; connections are linked into
 * their worker's list, so bulk removal walks only what it removes.
 *
 * Deduplication: each subidx_match() call takes a new epoch.  A subscription
 * reported in this epoch is skipped, and a filter already evaluated in this
 * epoch is not evaluated again.
 */
#include "subidx.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "../common/err.h"
#include "hmap.h"

#define WORKER_KEY_LEN 2
#define CONN_KEY_LEN (WORKER_KEY_LEN + 8)
#define TAG_LETTERS 52

struct fent;

/* One index entry's place: bucket b, slot pos. */
struct iref {
	struct bucket *b;
	uint32_t pos;
};

struct bslot {
	struct fent *fe;
	uint32_t ref; /* index into fe->refs */
};

struct bucket {
	struct hmap *map; /* the map holding it; NULL for the match-all bucket */
	struct bslot *v;
	uint32_t n, cap;
	size_t keylen;
	uint8_t key[]; /* the map borrows this */
};

struct fent {
	struct sub *sub;
	const struct filter *f;
	struct iref *refs;
	uint32_t nrefs; /* entries currently filed (grows while indexing) */
	uint64_t epoch; /* last subidx_match() that evaluated this filter */
};

struct sub {
	struct conn *conn;
	struct sub *prev, *next; /* in conn->subs */
	uint64_t epoch;          /* last subidx_match() that reported it */
	uint64_t conn_id;
	uint16_t worker;
	uint32_t serial;
	uint32_t nfilters;
	struct filter *filters; /* owned */
	struct fent *fents;     /* nfilters, in this allocation */
	size_t keylen;
	uint8_t *key; /* worker, conn_id, sub_id; in this allocation */
};

struct conn {
	struct worker *worker;
	struct conn *prev, *next; /* in worker->conns */
	struct sub *subs;
	uint8_t key[CONN_KEY_LEN];
};

struct worker {
	struct conn *conns;
	size_t nsubs;
	uint8_t key[WORKER_KEY_LEN];
};

struct subidx {
	struct hmap subs;    /* name -> struct sub */
	struct hmap conns;   /* worker, conn_id -> struct conn */
	struct hmap workers; /* worker -> struct worker */
	struct hmap ids, authors, kinds, tags[TAG_LETTERS]; /* key -> struct bucket */
	struct bucket *all; /* filters with no indexable field */
	uint64_t epoch;     /* of the latest subidx_match() */
};

/* How a filter is filed. */
enum plan_kind { PLAN_NONE, PLAN_IDS, PLAN_AUTHORS, PLAN_TAG, PLAN_KINDS, PLAN_ALL };

struct plan {
	enum plan_kind kind;
	const struct filter_tag *tag; /* PLAN_TAG */
	uint32_t nrefs;
};

/* ---- keys ---- */

static int tag_slot(char letter)
{
	if (letter >= 'a' && letter <= 'z')
		return letter - 'a';
	if (letter >= 'A' && letter <= 'Z')
		return 26 + (letter - 'A');
	return -1;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void conn_key(uint8_t key[CONN_KEY_LEN], uint16_t worker, uint64_t conn_id)
{
	put_be16(key, worker);
	put_be64(key + WORKER_KEY_LEN, conn_id);
}

/* Writes the name key into key (room for CONN_KEY_LEN + SUBIDX_SUB_ID_MAX). */
static size_t sub_key(uint8_t *key, uint16_t worker, uint64_t conn_id, const char *sub_id,
		      size_t sub_id_len)
{
	conn_key(key, worker, conn_id);
	memcpy(key + CONN_KEY_LEN, sub_id, sub_id_len);
	return CONN_KEY_LEN + sub_id_len;
}

/* ---- lifetime ---- */

static struct bucket *bucket_new(struct hmap *map, const void *key, size_t keylen)
{
	struct bucket *b = malloc(sizeof(*b) + keylen);

	if (!b)
		return NULL;
	memset(b, 0, sizeof(*b));
	b->map = map;
	b->keylen = keylen;
	if (keylen)
		memcpy(b->key, key, keylen);
	return b;
}

struct subidx *subidx_new(void)
{
	struct subidx *idx = calloc(1, sizeof(*idx));
	uint64_t seed[2];

	if (!idx)
		return NULL;
	hmap_seed(seed);
	hmap_init(&idx->subs, seed[0], seed[1]);
	hmap_init(&idx->conns, seed[0], seed[1]);
	hmap_init(&idx->workers, seed[0], seed[1]);
	hmap_init(&idx->ids, seed[0], seed[1]);
	hmap_init(&idx->authors, seed[0], seed[1]);
	hmap_init(&idx->kinds, seed[0], seed[1]);
	for (int i = 0; i < TAG_LETTERS; i++)
		hmap_init(&idx->tags[i], seed[0], seed[1]);
	idx->all = bucket_new(NULL, NULL, 0);
	if (!idx->all) {
		free(idx);
		return NULL;
	}
	return idx;
}

/* ---- buckets ---- */

/* The bucket for key in map, created empty if missing; NULL when out of memory. */
static struct bucket *bucket_get(struct hmap *map, const void *key, size_t keylen)
{
	struct bucket *b = hmap_get(map, key, keylen);

	if (b)
		return b;
	b = bucket_new(map, key, keylen);
	if (b && hmap_put(map, b->key, b->keylen, b)) {
		free(b);
		b = NULL;
	}
	return b;
}

/* Frees b if it is empty and not the match-all bucket. */
static void bucket_drop_if_empty(struct bucket *b)
{
	if (b->n || !b->map)
		return;
	hmap_remove(b->map, b->key, b->keylen);
	free(b->v);
	free(b);
}

static int bucket_push(struct bucket *b, struct fent *fe, uint32_t ref)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 4;
		struct bslot *v;

		if (b->cap > UINT32_MAX / 2)
			return ERR_NOMEM;
		v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return ERR_NOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n] = (struct bslot){ fe, ref };
	fe->refs[ref] = (struct iref){ b, b->n };
	b->n++;
	return 0;
}

/* Removes slot pos by moving the last slot into it; shrinks a mostly empty array. */
static void bucket_pop(struct bucket *b, uint32_t pos)
{
	struct bslot moved = b->v[--b->n];

	if (pos != b->n) {
		b->v[pos] = moved;
		moved.fe->refs[moved.ref].pos = pos;
	}
	if (b->cap > 16 && b->n < b->cap / 4) {
		struct bslot *v = realloc(b->v, (b->cap / 2) * sizeof(*v));

		if (v) {
			b->v = v;
			b->cap /= 2;
		}
	}
}

/* ---- filing filters ---- */

/* The letter tag with the fewest values, or NULL if there is none. */
static const struct filter_tag *fewest_values_tag(const struct filter *f)
{
	const struct filter_tag *best = NULL;

	for (uint32_t i = 0; i < f->ntags; i++) {
		if (tag_slot(f->tags[i].name) < 0)
			continue;
		if (!best || f->tags[i].nvalues < best->nvalues)
			best = &f->tags[i];
	}
	return best;
}

/* Chooses the most selective key of f.  A filter that can never match is not
 * filed at all. */
static struct plan plan_filter(const struct filter *f)
{
	struct plan p = { PLAN_NONE, NULL, 0 };

	if (filter_is_empty(f))
		return p;
	if (f->has_ids) {
		p.kind = PLAN_IDS;
		p.nrefs = f->nids;
	} else if (f->has_authors) {
		p.kind = PLAN_AUTHORS;
		p.nrefs = f->nauthors;
	} else if ((p.tag = fewest_values_tag(f)) != NULL) {
		p.kind = PLAN_TAG;
		p.nrefs = p.tag->nvalues;
	} else if (f->has_kinds) {
		p.kind = PLAN_KINDS;
		p.nrefs = f->nkinds;
	} else {
		p.kind = PLAN_ALL;
		p.nrefs = 1;
	}
	return p;
}

/* The bucket for entry i of plan p, created if missing; NULL when out of memory. */
static struct bucket *plan_bucket(struct subidx *idx, const struct filter *f,
				  const struct plan *p, uint32_t i)
{
	switch (p->kind) {
	case PLAN_IDS:
		return bucket_get(&idx->ids, f->ids[i], EVENT_ID_LEN);
	case PLAN_AUTHORS:
		return bucket_get(&idx->authors, f->authors[i], EVENT_PUBKEY_LEN);
	case PLAN_TAG:
		return bucket_get(&idx->tags[tag_slot(p->tag->name)], p->tag->values[i],
				  p->tag->lens[i]);
	case PLAN_KINDS:
		return bucket_get(&idx->kinds, &f->kinds[i], sizeof(f->kinds[i]));
	case PLAN_ALL:
		return idx->all;
	case PLAN_NONE:
		break;
	}
	return NULL;
}

/* Removes every entry of fe from the index. */
static void fent_unfile(struct fent *fe)
{
	for (uint32_t i = 0; i < fe->nrefs; i++) {
		struct bucket *b = fe->refs[i].b;

		bucket_pop(b, fe->refs[i].pos);
		bucket_drop_if_empty(b);
	}
	fe->nrefs = 0;
}

/* Files fe under each key of p.  On ERR_NOMEM the entries already filed stay
 * (counted in fe->nrefs) for the caller to unfile. */
static int fent_file(struct subidx *idx, struct fent *fe, const struct plan *p)
{
	for (uint32_t i = 0; i < p->nrefs; i++) {
		struct bucket *b = plan_bucket(idx, fe->f, p, i);

		if (!b)
			return ERR_NOMEM;
		if (bucket_push(b, fe, i)) {
			bucket_drop_if_empty(b);
			return ERR_NOMEM;
		}
		fe->nrefs = i + 1;
	}
	return 0;
}

/* ---- subscriptions ---- */

/* Unfiles s, frees its filters and its memory.  s must not be linked. */
static void sub_destroy(struct sub *s)
{
	for (uint32_t i = 0; i < s->nfilters; i++)
		fent_unfile(&s->fents[i]);
	filters_free(s->filters, s->nfilters);
	free(s);
}

/* One allocation: struct sub, then fents, then irefs, then the name key.
 * Returns NULL if too large or out of memory. */
static struct sub *sub_alloc(const struct filter *filters, uint32_t nfilters, size_t keylen)
{
	size_t nrefs = 0, fixed = sizeof(struct sub) + keylen;
	struct sub *s;

	if (nfilters > (SIZE_MAX - fixed) / 2 / sizeof(struct fent))
		return NULL;
	fixed += nfilters * sizeof(struct fent);
	for (uint32_t i = 0; i < nfilters; i++) {
		nrefs += plan_filter(&filters[i]).nrefs;
		if (nrefs > (SIZE_MAX - fixed) / sizeof(struct iref))
			return NULL;
	}
	s = calloc(1, fixed + nrefs * sizeof(struct iref));
	if (!s)
		return NULL;
	s->fents = (struct fent *)(s + 1);
	s->key = (uint8_t *)((struct iref *)(s->fents + nfilters) + nrefs);
	return s;
}

/* Builds and files a subscription, taking filters.  NULL when out of memory
 * (filters freed, index unchanged). */
static struct sub *sub_new(struct subidx *idx, uint16_t worker, uint64_t conn_id,
			   uint32_t serial, struct filter *filters, uint32_t nfilters,
			   const uint8_t *key, size_t keylen)
{
	struct sub *s = sub_alloc(filters, nfilters, keylen);
	struct iref *refs;

	if (!s) {
		filters_free(filters, nfilters);
		return NULL;
	}
	s->worker = worker;
	s->conn_id = conn_id;
	s->serial = serial;
	s->filters = filters;
	s->nfilters = nfilters;
	s->keylen = keylen;
	memcpy(s->key, key, keylen);
	refs = (struct iref *)(s->fents + nfilters);
	for (uint32_t i = 0; i < nfilters; i++) {
		struct fent *fe = &s->fents[i];
		struct plan p = plan_filter(&filters[i]);

		fe->sub = s;
		fe->f = &filters[i];
		fe->refs = refs;
		refs += p.nrefs;
		if (fent_file(idx, fe, &p)) {
			sub_destroy(s); /* fents not reached yet have nrefs 0 */
			return NULL;
		}
	}
	return s;
}

/* ---- connections and workers ---- */

static struct worker *worker_find(const struct subidx *idx, uint16_t worker)
{
	uint8_t key[WORKER_KEY_LEN];

	put_be16(key, worker);
	return hmap_get(&idx->workers, key, sizeof(key));
}

static struct conn *conn_find(const struct subidx *idx, uint16_t worker, uint64_t conn_id)
{
	uint8_t key[CONN_KEY_LEN];

	conn_key(key, worker, conn_id);
	return hmap_get(&idx->conns, key, sizeof(key));
}

/* The worker's record, created if missing; NULL when out of memory. */
static struct worker *worker_get(struct subidx *idx, uint16_t worker)
{
	struct worker *w = worker_find(idx, worker);

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	put_be16(w->key, worker);
	if (hmap_put(&idx->workers, w->key, sizeof(w->key), w)) {
		free(w);
		return NULL;
	}
	return w;
}

/* The connection's record, created and linked into w if missing; NULL when
 * out of memory. */
static struct conn *conn_get(struct subidx *idx, struct worker *w, uint16_t worker,
			     uint64_t conn_id)
{
	struct conn *c = conn_find(idx, worker, conn_id);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	conn_key(c->key, worker, conn_id);
	if (hmap_put(&idx->conns, c->key, sizeof(c->key), c)) {
		free(c);
		return NULL;
	}
	c->worker = w;
	c->next = w->conns;
	if (c->next)
		c->next->prev = c;
	w->conns = c;
	return c;
}

static void worker_release_if_empty(struct subidx *idx, struct worker *w)
{
	if (w->conns)
		return;
	hmap_remove(&idx->workers, w->key, sizeof(w->key));
	free(w);
}

/* Frees c if it has no subscriptions; leaves its worker's record alone. */
static void conn_release_if_empty(struct subidx *idx, struct conn *c)
{
	if (c->subs)
		return;
	hmap_remove(&idx->conns, c->key, sizeof(c->key));
	if (c->prev)
		c->prev->next = c->next;
	else
		c->worker->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

static void sub_link(struct conn *c, struct sub *s)
{
	s->conn = c;
	s->prev = NULL;
	s->next = c->subs;
	if (s->next)
		s->next->prev = s;
	c->subs = s;
	c->worker->nsubs++;
}

static void sub_unlink(struct sub *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		s->conn->subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->conn->worker->nsubs--;
	s->conn = NULL;
}

/* Removes s from every structure and frees it; its connection may become
 * empty, which the caller handles. */
static void sub_release(struct subidx *idx, struct sub *s)
{
	hmap_remove(&idx->subs, s->key, s->keylen);
	sub_unlink(s);
	sub_destroy(s);
}

/* Puts a filed, new subscription s (whose name is not taken) in place.
 * Returns 0 or ERR_NOMEM (index unchanged apart from capacity; s not linked). */
static int sub_insert(struct subidx *idx, struct sub *s)
{
	struct worker *w;
	struct conn *c;

	if (hmap_reserve(&idx->subs, hmap_count(&idx->subs) + 1))
		return ERR_NOMEM;
	w = worker_get(idx, s->worker);
	if (!w)
		return ERR_NOMEM;
	c = conn_get(idx, w, s->worker, s->conn_id);
	if (!c) {
		worker_release_if_empty(idx, w);
		return ERR_NOMEM;
	}
	(void)hmap_put(&idx->subs, s->key, s->keylen, s); /* reserved: cannot fail */
	sub_link(c, s);
	return 0;
}

/* Puts s in the place of old (same name) and frees old. */
static void sub_replace(struct subidx *idx, struct sub *old, struct sub *s)
{
	struct conn *c = old->conn;

	(void)hmap_put(&idx->subs, s->key, s->keylen, s); /* key present: cannot fail */
	sub_unlink(old);
	sub_link(c, s);
	sub_destroy(old);
}

static bool sub_id_valid(const char *sub_id, size_t sub_id_len)
{
	return sub_id && sub_id_len >= 1 && sub_id_len <= SUBIDX_SUB_ID_MAX;
}

int subidx_add(struct subidx *idx, uint16_t worker, uint64_t conn_id, const char *sub_id,
	       size_t sub_id_len, uint32_t sub_serial, struct filter *filters, uint32_t nfilters)
{
	uint8_t key[CONN_KEY_LEN + SUBIDX_SUB_ID_MAX];
	size_t keylen;
	struct sub *s, *old;

	if (!sub_id_valid(sub_id, sub_id_len)) {
		filters_free(filters, nfilters);
		return ERR_INVAL;
	}
	keylen = sub_key(key, worker, conn_id, sub_id, sub_id_len);
	s = sub_new(idx, worker, conn_id, sub_serial, filters, nfilters, key, keylen);
	if (!s)
		return ERR_NOMEM;
	old = hmap_get(&idx->subs, key, keylen);
	if (old) {
		sub_replace(idx, old, s);
		return 0;
	}
	if (sub_insert(idx, s)) {
		sub_destroy(s);
		return ERR_NOMEM;
	}
	return 0;
}

int subidx_remove(struct subidx *idx, uint16_t worker, uint64_t conn_id, const char *sub_id,
		  size_t sub_id_len)
{
	uint8_t key[CONN_KEY_LEN + SUBIDX_SUB_ID_MAX];
	struct sub *s;
	struct conn *c;
	struct worker *w;

	if (!sub_id_valid(sub_id, sub_id_len))
		return ERR_NOTFOUND;
	s = hmap_get(&idx->subs, key, sub_key(key, worker, conn_id, sub_id, sub_id_len));
	if (!s)
		return ERR_NOTFOUND;
	c = s->conn;
	w = c->worker;
	sub_release(idx, s);
	conn_release_if_empty(idx, c);
	worker_release_if_empty(idx, w);
	return 0;
}

/* Removes every subscription of c and c itself; returns how many. */
static size_t conn_clear(struct subidx *idx, struct conn *c)
{
	size_t n = 0;

	for (; c->subs; n++)
		sub_release(idx, c->subs);
	conn_release_if_empty(idx, c);
	return n;
}

size_t subidx_remove_conn(struct subidx *idx, uint16_t worker, uint64_t conn_id)
{
	struct conn *c = conn_find(idx, worker, conn_id);
	struct worker *w;
	size_t n;

	if (!c)
		return 0;
	w = c->worker;
	n = conn_clear(idx, c);
	worker_release_if_empty(idx, w);
	return n;
}

static size_t worker_clear(struct subidx *idx, struct worker *w)
{
	size_t n = 0;

	while (w->conns)
		n += conn_clear(idx, w->conns);
	worker_release_if_empty(idx, w);
	return n;
}

size_t subidx_remove_worker(struct subidx *idx, uint16_t worker)
{
	struct worker *w = worker_find(idx, worker);

	return w ? worker_clear(idx, w) : 0;
}

void subidx_free(struct subidx *idx)
{
	size_t pos = 0;
	struct worker *w;

	if (!idx)
		return;
	/* Each removal may reshape the map, so restart the scan every time. */
	while ((w = hmap_next(&idx->workers, &pos)) != NULL) {
		worker_clear(idx, w);
		pos = 0;
	}
	hmap_free(&idx->subs);
	hmap_free(&idx->conns);
	hmap_free(&idx->workers);
	hmap_free(&idx->ids);
	hmap_free(&idx->authors);
	hmap_free(&idx->kinds);
	for (int i = 0; i < TAG_LETTERS; i++)
		hmap_free(&idx->tags[i]);
	free(idx->all->v);
	free(idx->all);
	free(idx);
}

/* ---- matching ---- */

struct match_ctx {
	const struct event *ev;
	subidx_match_fn fn;
	void *arg;
	uint64_t epoch;
	size_t calls;
};

/* Evaluates the filters in b that this epoch has not seen, on behalf of
 * subscriptions not yet reported. */
static void match_bucket(struct match_ctx *m, const struct bucket *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->n; i++) {
		struct fent *fe = b->v[i].fe;
		struct sub *s = fe->sub;

		if (s->epoch == m->epoch || fe->epoch == m->epoch)
			continue;
		fe->epoch = m->epoch;
		if (!filter_matches(fe->f, m->ev))
			continue;
		s->epoch = m->epoch;
		m->fn(m->arg, s->worker, s->conn_id, s->serial);
		m->calls++;
	}
}

size_t subidx_match(struct subidx *idx, const struct event *ev, subidx_match_fn fn, void *arg)
{
	struct match_ctx m = { ev, fn, arg, ++idx->epoch, 0 };

	match_bucket(&m, hmap_get(&idx->ids, ev->id, EVENT_ID_LEN));
	match_bucket(&m, hmap_get(&idx->authors, ev->pubkey, EVENT_PUBKEY_LEN));
	for (uint32_t i = 0; i < ev->ntags; i++) {
		int slot = tag_slot(ev->tags[i].name);

		if (slot >= 0)
			match_bucket(&m, hmap_get(&idx->tags[slot], ev->tags[i].value,
						  ev->tags[i].value_len));
	}
	match_bucket(&m, hmap_get(&idx->kinds, &ev->kind, sizeof(ev->kind)));
	match_bucket(&m, idx->all);
	return m.calls;
}

/* ---- listing ---- */

size_t subidx_foreach(const struct subidx *idx, subidx_visit_fn fn, void *arg)
{
	size_t pos = 0, calls = 0;
	const struct sub *s;

	while ((s = hmap_next(&idx->subs, &pos)) != NULL) {
		calls++;
		if (fn(arg, s->worker, s->conn_id, (const char *)s->key + CONN_KEY_LEN,
		       s->keylen - CONN_KEY_LEN, s->serial, s->filters, s->nfilters))
			break;
	}
	return calls;
}

size_t subidx_count(const struct subidx *idx)
{
	return hmap_count(&idx->subs);
}

size_t subidx_count_worker(const struct subidx *idx, uint16_t worker)
{
	const struct worker *w = worker_find(idx, worker);

	return w ? w->nsubs : 0;
}
