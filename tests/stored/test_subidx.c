/*
 * test_subidx.c - checks stored/subidx.c: the add/replace/remove contract,
 * exactly-once reporting, the listing walk (subidx_foreach), and a
 * differential run against a linear scan with a reference matcher that
 * works on universe indices (bitmasks), not bytes, so it shares no logic
 * with filter_matches().
 */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../stored/subidx.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

/* ---- helpers for the hand-written cases ---- */

static void fill32(uint8_t out[32], int v)
{
	memset(out, v, 32);
}

static struct filter *filters_new(uint32_t n)
{
	struct filter *f = calloc(n ? n : 1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	for (uint32_t i = 0; i < n; i++)
		filter_init(&f[i]);
	return f;
}

static struct filter *filter_one(void)
{
	return filters_new(1);
}

/* Sets f->ids to the n ids whose bytes are all equal to the int arguments. */
static void f_ids(struct filter *f, uint32_t n, ...)
{
	va_list ap;

	f->has_ids = true;
	f->nids = n;
	f->ids = n ? malloc(n * 32u) : NULL;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		fill32(f->ids[i], va_arg(ap, int));
	va_end(ap);
}

static void f_authors(struct filter *f, uint32_t n, ...)
{
	va_list ap;

	f->has_authors = true;
	f->nauthors = n;
	f->authors = n ? malloc(n * 32u) : NULL;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		fill32(f->authors[i], va_arg(ap, int));
	va_end(ap);
}

static void f_kinds(struct filter *f, uint32_t n, ...)
{
	va_list ap;

	f->has_kinds = true;
	f->nkinds = n;
	f->kinds = n ? malloc(n * sizeof(uint32_t)) : NULL;
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		f->kinds[i] = va_arg(ap, uint32_t);
	va_end(ap);
}

/* Appends `#name` with the given values (len bytes each, lens may include NULs). */
static void f_tag_bytes(struct filter *f, char name, uint32_t n, const char *const *values,
			const uint32_t *lens)
{
	struct filter_tag *t;

	f->tags = realloc(f->tags, (f->ntags + 1) * sizeof(*f->tags));
	ck_assert_ptr_nonnull(f->tags);
	t = &f->tags[f->ntags++];
	t->name = name;
	t->nvalues = n;
	t->values = calloc(n ? n : 1, sizeof(char *));
	t->lens = calloc(n ? n : 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		t->lens[i] = lens[i];
		t->values[i] = malloc(lens[i] + 1);
		memcpy(t->values[i], values[i], lens[i]);
		t->values[i][lens[i]] = '\0';
	}
}

static void f_tag(struct filter *f, char name, uint32_t n, ...)
{
	const char *values[8];
	uint32_t lens[8];
	va_list ap;

	ck_assert_uint_le(n, 8);
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		values[i] = va_arg(ap, const char *);
		lens[i] = (uint32_t)strlen(values[i]);
	}
	va_end(ap);
	f_tag_bytes(f, name, n, values, lens);
}

/* An event with id and pubkey bytes all equal to id/pk and tags given as
 * "e:value" strings. */
static void ev_make(struct event *ev, int id, int pk, uint32_t kind, int64_t created,
		    uint32_t ntags, ...)
{
	uint8_t idb[32], pkb[32], sig[64] = { 0 };
	struct event_tag tags[8];
	va_list ap;

	ck_assert_uint_le(ntags, 8);
	fill32(idb, id);
	fill32(pkb, pk);
	va_start(ap, ntags);
	for (uint32_t i = 0; i < ntags; i++) {
		const char *s = va_arg(ap, const char *);

		tags[i].name = s[0];
		tags[i].value = s + 2;
		tags[i].value_len = (uint32_t)strlen(s + 2);
	}
	va_end(ap);
	ck_assert_int_eq(event_build(ev, idb, pkb, sig, created, kind, tags, ntags, "{}", 2), 0);
}

struct hit {
	uint16_t worker;
	uint64_t conn_id;
	uint32_t serial;
};

struct hits {
	size_t n, cap;
	struct hit *v;
};

static void hits_collect(void *arg, uint16_t worker, uint64_t conn_id, uint32_t serial)
{
	struct hits *h = arg;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 64;
		h->v = realloc(h->v, h->cap * sizeof(*h->v));
		ck_assert_ptr_nonnull(h->v);
	}
	h->v[h->n++] = (struct hit){ worker, conn_id, serial };
}

static int hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->worker != y->worker)
		return x->worker < y->worker ? -1 : 1;
	if (x->conn_id != y->conn_id)
		return x->conn_id < y->conn_id ? -1 : 1;
	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	return 0;
}

/* Matches ev and returns the serials reported, sorted, as a bitmask (serials
 * in these cases are below 64); checks the return value against the calls. */
static uint64_t match_serials(struct subidx *idx, const struct event *ev)
{
	struct hits h = { 0, 0, NULL };
	uint64_t mask = 0;
	size_t calls = subidx_match(idx, ev, hits_collect, &h);

	ck_assert_uint_eq(calls, h.n);
	for (size_t i = 0; i < h.n; i++) {
		ck_assert_uint_lt(h.v[i].serial, 64);
		ck_assert_msg(!(mask & (UINT64_C(1) << h.v[i].serial)), "serial %u twice",
			      h.v[i].serial);
		mask |= UINT64_C(1) << h.v[i].serial;
	}
	free(h.v);
	return mask;
}

#define BIT(n) (UINT64_C(1) << (n))

/* Adds a subscription with one filter of kinds [kind]. */
static int add_kind(struct subidx *idx, uint16_t w, uint64_t c, const char *sub, uint32_t serial,
		    uint32_t kind)
{
	struct filter *f = filter_one();

	f_kinds(f, 1, kind);
	return subidx_add(idx, w, c, sub, strlen(sub), serial, f, 1);
}

/* ---- contract cases ---- */

START_TEST(test_add_and_count)
{
	struct subidx *idx = subidx_new();

	ck_assert_ptr_nonnull(idx);
	ck_assert_uint_eq(subidx_count(idx), 0);
	ck_assert_uint_eq(subidx_count_worker(idx, 0), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "a", 1, 1), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "b", 2, 1), 0);
	ck_assert_int_eq(add_kind(idx, 0, 2, "a", 3, 1), 0);
	ck_assert_int_eq(add_kind(idx, 3, 1, "a", 4, 1), 0);
	ck_assert_uint_eq(subidx_count(idx), 4);
	ck_assert_uint_eq(subidx_count_worker(idx, 0), 3);
	ck_assert_uint_eq(subidx_count_worker(idx, 3), 1);
	ck_assert_uint_eq(subidx_count_worker(idx, 1), 0);
	subidx_free(idx);
}
END_TEST

START_TEST(test_sub_id_length)
{
	struct subidx *idx = subidx_new();
	char id[SUBIDX_SUB_ID_MAX + 1];

	memset(id, 'x', sizeof(id));
	/* The filters are taken (and freed) even when refused: LSan checks. */
	ck_assert_int_eq(subidx_add(idx, 0, 1, id, 0, 1, filter_one(), 1), ERR_INVAL);
	ck_assert_int_eq(subidx_add(idx, 0, 1, id, sizeof(id), 1, filter_one(), 1), ERR_INVAL);
	ck_assert_int_eq(subidx_add(idx, 0, 1, NULL, 1, 1, filter_one(), 1), ERR_INVAL);
	ck_assert_uint_eq(subidx_count(idx), 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, id, SUBIDX_SUB_ID_MAX, 1, filter_one(), 1), 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, id, 1, 2, filter_one(), 1), 0);
	ck_assert_uint_eq(subidx_count(idx), 2);
	ck_assert_int_eq(subidx_remove(idx, 0, 1, id, 0), ERR_NOTFOUND);
	ck_assert_int_eq(subidx_remove(idx, 0, 1, id, sizeof(id)), ERR_NOTFOUND);
	ck_assert_int_eq(subidx_remove(idx, 0, 1, id, SUBIDX_SUB_ID_MAX), 0);
	ck_assert_uint_eq(subidx_count(idx), 1);
	subidx_free(idx);
}
END_TEST

START_TEST(test_sub_id_is_bytes_and_scoped)
{
	struct subidx *idx = subidx_new();
	struct event ev;

	/* "a", "a\0" and "a\0b" are three names; the same name on another
	 * connection or worker is another subscription. */
	ck_assert_int_eq(subidx_add(idx, 0, 1, "a", 1, 1, filter_one(), 1), 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, "a\0", 2, 2, filter_one(), 1), 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, "a\0b", 3, 3, filter_one(), 1), 0);
	ck_assert_int_eq(subidx_add(idx, 0, 2, "a", 1, 4, filter_one(), 1), 0);
	ck_assert_int_eq(subidx_add(idx, 1, 1, "a", 1, 5, filter_one(), 1), 0);
	ck_assert_uint_eq(subidx_count(idx), 5);
	ev_make(&ev, 1, 1, 1, 100, 0);
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5));
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "a\0", 2), 0);
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(1) | BIT(3) | BIT(4) | BIT(5));
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_replace_uses_new_filters_and_serial)
{
	struct subidx *idx = subidx_new();
	struct event k1, k2;

	ev_make(&k1, 1, 1, 1, 100, 0);
	ev_make(&k2, 2, 1, 2, 100, 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "s", 1, 1), 0);
	ck_assert_uint_eq(match_serials(idx, &k1), BIT(1));
	ck_assert_int_eq(add_kind(idx, 0, 1, "s", 2, 2), 0);
	ck_assert_uint_eq(subidx_count(idx), 1);
	ck_assert_uint_eq(subidx_count_worker(idx, 0), 1);
	ck_assert_uint_eq(match_serials(idx, &k1), 0);
	ck_assert_uint_eq(match_serials(idx, &k2), BIT(2));
	/* Replacing with the same filters keeps one entry, new serial. */
	ck_assert_int_eq(add_kind(idx, 0, 1, "s", 3, 2), 0);
	ck_assert_uint_eq(match_serials(idx, &k2), BIT(3));
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "s", 1), 0);
	ck_assert_uint_eq(match_serials(idx, &k2), 0);
	ck_assert_uint_eq(subidx_count(idx), 0);
	event_free(&k1);
	event_free(&k2);
	subidx_free(idx);
}
END_TEST

START_TEST(test_remove)
{
	struct subidx *idx = subidx_new();
	struct event ev;

	ev_make(&ev, 1, 1, 7, 100, 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "a", 1, 7), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "b", 2, 7), 0);
	ck_assert_int_eq(subidx_remove(idx, 0, 2, "a", 1), ERR_NOTFOUND);
	ck_assert_int_eq(subidx_remove(idx, 1, 1, "a", 1), ERR_NOTFOUND);
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "c", 1), ERR_NOTFOUND);
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "a", 1), 0);
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "a", 1), ERR_NOTFOUND);
	ck_assert_uint_eq(subidx_count(idx), 1);
	ck_assert_uint_eq(subidx_count_worker(idx, 0), 1);
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(2));
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "b", 1), 0);
	ck_assert_uint_eq(subidx_count_worker(idx, 0), 0);
	ck_assert_uint_eq(match_serials(idx, &ev), 0);
	/* The emptied connection and worker can be used again. */
	ck_assert_int_eq(add_kind(idx, 0, 1, "a", 3, 7), 0);
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(3));
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_remove_conn)
{
	struct subidx *idx = subidx_new();
	struct event ev;

	ev_make(&ev, 1, 1, 7, 100, 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "a", 1, 7), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "b", 2, 7), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "c", 3, 8), 0);
	ck_assert_int_eq(add_kind(idx, 0, 2, "a", 4, 7), 0);
	ck_assert_int_eq(add_kind(idx, 1, 1, "a", 5, 7), 0);
	ck_assert_uint_eq(subidx_remove_conn(idx, 0, 1), 3);
	ck_assert_uint_eq(subidx_remove_conn(idx, 0, 1), 0);
	ck_assert_uint_eq(subidx_remove_conn(idx, 0, 99), 0);
	ck_assert_uint_eq(subidx_count(idx), 2);
	ck_assert_uint_eq(subidx_count_worker(idx, 0), 1);
	ck_assert_uint_eq(subidx_count_worker(idx, 1), 1);
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(4) | BIT(5));
	ck_assert_int_eq(subidx_remove(idx, 0, 1, "a", 1), ERR_NOTFOUND);
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_remove_worker)
{
	struct subidx *idx = subidx_new();
	struct event ev;

	ev_make(&ev, 1, 1, 7, 100, 0);
	ck_assert_int_eq(add_kind(idx, 2, 1, "a", 1, 7), 0);
	ck_assert_int_eq(add_kind(idx, 2, 2, "a", 2, 7), 0);
	ck_assert_int_eq(add_kind(idx, 2, 3, "a", 3, 8), 0);
	ck_assert_int_eq(add_kind(idx, 65535, 1, "a", 4, 7), 0);
	ck_assert_uint_eq(subidx_remove_worker(idx, 2), 3);
	ck_assert_uint_eq(subidx_remove_worker(idx, 2), 0);
	ck_assert_uint_eq(subidx_remove_worker(idx, 7), 0);
	ck_assert_uint_eq(subidx_count(idx), 1);
	ck_assert_uint_eq(subidx_count_worker(idx, 2), 0);
	ck_assert_uint_eq(subidx_count_worker(idx, 65535), 1);
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(4));
	ck_assert_uint_eq(subidx_remove_conn(idx, 2, 1), 0);
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

/* ---- subidx_foreach ---- */

struct seen_sub {
	uint16_t worker;
	uint64_t conn_id;
	char sub_id[8];
	size_t sub_id_len;
	uint32_t serial, nfilters, kind0;
};

struct walk {
	struct seen_sub seen[16];
	size_t n, stop_after;
};

static int walk_visit(void *arg, uint16_t worker, uint64_t conn_id, const char *sub_id,
		      size_t sub_id_len, uint32_t serial, const struct filter *filters,
		      uint32_t nfilters)
{
	struct walk *w = arg;
	struct seen_sub *s = &w->seen[w->n++];

	ck_assert_uint_le(w->n, 16);
	ck_assert_uint_le(sub_id_len, sizeof(s->sub_id));
	s->worker = worker;
	s->conn_id = conn_id;
	memcpy(s->sub_id, sub_id, sub_id_len);
	s->sub_id_len = sub_id_len;
	s->serial = serial;
	s->nfilters = nfilters;
	s->kind0 = nfilters && filters[0].has_kinds ? filters[0].kinds[0] : 0;
	return w->stop_after && w->n == w->stop_after;
}

/* The walk's record of serial, or NULL. */
static const struct seen_sub *walk_find(const struct walk *w, uint32_t serial)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->seen[i].serial == serial)
			return &w->seen[i];
	return NULL;
}

/* Every subscription once, with its name, serial and filters as they are
 * now (replaced, removed and bulk-removed ones show as such). */
START_TEST(test_foreach)
{
	struct subidx *idx = subidx_new();
	struct filter *two = filters_new(2);
	static struct walk w;
	const struct seen_sub *s;

	memset(&w, 0, sizeof(w));
	ck_assert_uint_eq(subidx_foreach(idx, walk_visit, &w), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "a", 1, 10), 0);
	ck_assert_int_eq(add_kind(idx, 0, 1, "a", 2, 11), 0); /* replaces serial 1 */
	ck_assert_int_eq(subidx_add(idx, 0, 1, "a\0b", 3, 3, filter_one(), 1), 0);
	f_kinds(&two[0], 1, 30023);
	ck_assert_int_eq(subidx_add(idx, 7, 1ull << 40, "zz", 2, 4, two, 2), 0);
	ck_assert_int_eq(add_kind(idx, 2, 5, "gone", 5, 1), 0);
	ck_assert_int_eq(add_kind(idx, 3, 6, "conn", 6, 1), 0);
	ck_assert_int_eq(add_kind(idx, 3, 7, "kept", 7, 1), 0);
	ck_assert_int_eq(subidx_remove(idx, 2, 5, "gone", 4), 0);
	ck_assert_uint_eq(subidx_remove_conn(idx, 3, 6), 1);
	ck_assert_uint_eq(subidx_foreach(idx, walk_visit, &w), 4);
	ck_assert_uint_eq(w.n, subidx_count(idx));
	ck_assert_ptr_null(walk_find(&w, 1));
	ck_assert_ptr_null(walk_find(&w, 5));
	ck_assert_ptr_null(walk_find(&w, 6));
	s = walk_find(&w, 2);
	ck_assert_ptr_nonnull(s);
	ck_assert(s->worker == 0 && s->conn_id == 1 && s->sub_id_len == 1 && s->sub_id[0] == 'a');
	ck_assert(s->nfilters == 1 && s->kind0 == 11);
	s = walk_find(&w, 3);
	ck_assert_ptr_nonnull(s);
	ck_assert(s->sub_id_len == 3 && memcmp(s->sub_id, "a\0b", 3) == 0 && s->kind0 == 0);
	s = walk_find(&w, 4);
	ck_assert_ptr_nonnull(s);
	ck_assert(s->worker == 7 && s->conn_id == 1ull << 40 && s->nfilters == 2 &&
		  s->kind0 == 30023 && memcmp(s->sub_id, "zz", 2) == 0);
	s = walk_find(&w, 7);
	ck_assert_ptr_nonnull(s);
	ck_assert(s->worker == 3 && s->conn_id == 7);
	subidx_free(idx);
}
END_TEST

/* A nonzero return stops the walk after that call. */
START_TEST(test_foreach_stops)
{
	struct subidx *idx = subidx_new();
	static struct walk w;
	char name[2] = { 0, 0 };

	for (int i = 0; i < 10; i++) {
		name[0] = (char)('a' + i);
		ck_assert_int_eq(add_kind(idx, 0, 1, name, (uint32_t)i, 1), 0);
	}
	memset(&w, 0, sizeof(w));
	w.stop_after = 3;
	ck_assert_uint_eq(subidx_foreach(idx, walk_visit, &w), 3);
	ck_assert_uint_eq(w.n, 3);
	subidx_free(idx);
}
END_TEST

START_TEST(test_two_matching_filters_reported_once)
{
	struct subidx *idx = subidx_new();
	struct filter *f = filters_new(3);
	struct hits h = { 0, 0, NULL };
	struct event ev;

	f_kinds(&f[0], 1, 1);
	f_authors(&f[1], 1, 9);
	/* f[2] is match-all */
	ck_assert_int_eq(subidx_add(idx, 4, 77, "x", 1, 9, f, 3), 0);
	ev_make(&ev, 1, 9, 1, 100, 0);
	ck_assert_uint_eq(subidx_match(idx, &ev, hits_collect, &h), 1);
	ck_assert_uint_eq(h.n, 1);
	ck_assert_uint_eq(h.v[0].worker, 4);
	ck_assert_uint_eq(h.v[0].conn_id, 77);
	ck_assert_uint_eq(h.v[0].serial, 9);
	free(h.v);
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_found_through_several_buckets_once)
{
	struct subidx *idx = subidx_new();
	struct filter *f;
	struct event ev;

	f = filter_one();
	f_ids(f, 2, 5, 5); /* the same id twice */
	ck_assert_int_eq(subidx_add(idx, 0, 1, "ids", 3, 1, f, 1), 0);
	f = filter_one();
	f_tag(f, 'e', 2, "v1", "v2");
	ck_assert_int_eq(subidx_add(idx, 0, 1, "tag", 3, 2, f, 1), 0);
	f = filter_one();
	f_tag(f, 'p', 1, "pk");
	ck_assert_int_eq(subidx_add(idx, 0, 1, "dup", 3, 3, f, 1), 0);
	ev_make(&ev, 5, 1, 1, 100, 4, "e:v1", "e:v2", "p:pk", "p:pk");
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(1) | BIT(2) | BIT(3));
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_candidates_are_checked_fully)
{
	struct subidx *idx = subidx_new();
	struct filter *f;
	struct event ev;

	f = filter_one();
	f_ids(f, 1, 5);
	f_kinds(f, 1, 2);
	ck_assert_int_eq(subidx_add(idx, 0, 1, "a", 1, 1, f, 1), 0);
	f = filter_one();
	f_authors(f, 1, 6);
	f->since = 200;
	ck_assert_int_eq(subidx_add(idx, 0, 1, "b", 1, 2, f, 1), 0);
	f = filter_one();
	f_tag(f, 'e', 1, "x");
	f_tag(f, 'p', 1, "y");
	ck_assert_int_eq(subidx_add(idx, 0, 1, "c", 1, 3, f, 1), 0);
	f = filter_one();
	f_tag(f, 'E', 1, "x"); /* letters are case-sensitive */
	ck_assert_int_eq(subidx_add(idx, 0, 1, "d", 1, 4, f, 1), 0);
	f = filter_one();
	f->until = 99;
	ck_assert_int_eq(subidx_add(idx, 0, 1, "e", 1, 5, f, 1), 0);

	ev_make(&ev, 5, 6, 1, 100, 1, "e:x");
	ck_assert_uint_eq(match_serials(idx, &ev), 0);
	event_free(&ev);
	ev_make(&ev, 5, 6, 2, 200, 2, "e:x", "p:y");
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(1) | BIT(2) | BIT(3));
	event_free(&ev);
	ev_make(&ev, 1, 1, 1, 99, 1, "E:x");
	ck_assert_uint_eq(match_serials(idx, &ev), BIT(4) | BIT(5));
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_filters_that_never_match)
{
	struct subidx *idx = subidx_new();
	struct filter *f;
	struct event ev;

	ck_assert_int_eq(subidx_add(idx, 0, 1, "none", 4, 1, NULL, 0), 0);
	f = filter_one();
	f_kinds(f, 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, "kinds", 5, 2, f, 1), 0);
	f = filter_one();
	f_tag(f, 'e', 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, "tag", 3, 3, f, 1), 0);
	f = filter_one();
	f->since = 101;
	f->until = 100;
	ck_assert_int_eq(subidx_add(idx, 0, 1, "range", 5, 4, f, 1), 0);
	f = filter_one();
	f->search = strdup("nostr");
	ck_assert_int_eq(subidx_add(idx, 0, 1, "search", 6, 5, f, 1), 0);
	f = filter_one();
	f_ids(f, 0);
	ck_assert_int_eq(subidx_add(idx, 0, 1, "ids", 3, 6, f, 1), 0);
	ck_assert_uint_eq(subidx_count(idx), 6);
	ev_make(&ev, 1, 1, 1, 100, 1, "e:x");
	ck_assert_uint_eq(match_serials(idx, &ev), 0);
	ck_assert_uint_eq(subidx_remove_conn(idx, 0, 1), 6);
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

START_TEST(test_removed_not_reported)
{
	struct subidx *idx = subidx_new();
	struct event ev;
	char name[2] = { 0, 0 };

	/* 60 subscriptions sharing buckets; removing some reorders the
	 * buckets, and only the rest may be reported. */
	for (uint32_t i = 0; i < 60; i++) {
		struct filter *f = filters_new(2);

		name[0] = (char)('A' + i);
		f_authors(&f[0], 2, 1, (int)(i % 3));
		f_tag(&f[1], 'p', 1, "pk");
		ck_assert_int_eq(subidx_add(idx, (uint16_t)(i % 2), i / 20, name, 1, i, f, 2), 0);
	}
	for (uint32_t i = 0; i < 60; i += 3) {
		name[0] = (char)('A' + i);
		ck_assert_int_eq(subidx_remove(idx, (uint16_t)(i % 2), i / 20, name, 1), 0);
	}
	ev_make(&ev, 1, 1, 1, 100, 1, "p:pk");
	{
		uint64_t expect = 0;

		for (uint32_t i = 0; i < 60; i++)
			if (i % 3)
				expect |= BIT(i);
		ck_assert_uint_eq(match_serials(idx, &ev), expect);
	}
	ck_assert_uint_eq(subidx_remove_conn(idx, 1, 0), 7);
	ck_assert_uint_eq(subidx_remove_worker(idx, 0), 20);
	ck_assert_uint_eq(subidx_count(idx), 13);
	for (uint64_t m = match_serials(idx, &ev); m; m &= m - 1) {
		int i = __builtin_ctzll(m);

		ck_assert(i % 3 != 0 && i % 2 == 1 && i >= 20);
	}
	event_free(&ev);
	subidx_free(idx);
}
END_TEST

/* ---- differential run ---- */

static struct splitmix rng;

/* A small universe so that matches are frequent. */
#define U_IDS 6
#define U_PKS 6
#define U_VALS 6
static const uint32_t u_kinds[] = { 0, 1, 3, 7, 30023, 65535 };
#define U_KINDS 6
static const char f_letters[] = "epPtdZE"; /* letters filters use */
#define U_LETTERS 7
static const char ev_letters[] = "epPtdZEx"; /* events also carry x */
static const char *const u_vals[U_VALS] = {
	"a", "b", "", "a\0b", "A", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
};
static const uint32_t u_val_lens[U_VALS] = { 1, 1, 0, 3, 1, 64 };

/* A filter as sets of universe indices. */
struct mfilter {
	bool has_ids, has_authors, has_kinds, search;
	uint32_t ids, authors, kinds; /* bitmasks */
	bool has_tag[U_LETTERS];
	uint32_t tag[U_LETTERS]; /* bitmasks over u_vals */
	int64_t since, until;
};

struct mevent {
	uint32_t id, pk, kind; /* indices */
	int64_t created_at;
	uint32_t ntags;
	uint32_t tag_letter[6], tag_val[6]; /* indices into ev_letters, u_vals */
};

/* The reference: NIP-01 read literally, on indices. */
static bool ref_matches(const struct mfilter *f, const struct mevent *e)
{
	if (f->search)
		return false;
	if (f->has_ids && !(f->ids & (1u << e->id)))
		return false;
	if (f->has_authors && !(f->authors & (1u << e->pk)))
		return false;
	if (f->has_kinds && !(f->kinds & (1u << e->kind)))
		return false;
	if (e->created_at < f->since || e->created_at > f->until)
		return false;
	for (uint32_t l = 0; l < U_LETTERS; l++) {
		bool found = false;

		if (!f->has_tag[l])
			continue;
		for (uint32_t t = 0; t < e->ntags; t++)
			if (ev_letters[e->tag_letter[t]] == f_letters[l] &&
			    (f->tag[l] & (1u << e->tag_val[t])))
				found = true;
		if (!found)
			return false;
	}
	return true;
}

/* A random list over n elements: sometimes empty, usually one to three. */
static uint32_t random_mask(uint32_t n)
{
	uint32_t mask = 0, count = splitmix_below(&rng, 12) == 0 ? 0 : 1 + splitmix_below(&rng, 3);

	for (uint32_t i = 0; i < count; i++)
		mask |= 1u << splitmix_below(&rng, n);
	return mask;
}

static void random_mfilter(struct mfilter *f)
{
	memset(f, 0, sizeof(*f));
	f->has_ids = splitmix_below(&rng, 6) == 0;
	f->ids = f->has_ids ? random_mask(U_IDS) : 0;
	f->has_authors = splitmix_below(&rng, 3) == 0;
	f->authors = f->has_authors ? random_mask(U_PKS) : 0;
	f->has_kinds = splitmix_below(&rng, 5) < 2;
	f->kinds = f->has_kinds ? random_mask(U_KINDS) : 0;
	for (uint32_t n = splitmix_below(&rng, 4) == 0 ? 1 + splitmix_below(&rng, 2) : 0;
	     n > 0; n--) {
		uint32_t l = splitmix_below(&rng, U_LETTERS);

		f->has_tag[l] = true;
		f->tag[l] = random_mask(U_VALS);
	}
	f->since = splitmix_below(&rng, 5) == 0 ? (int64_t)splitmix_below(&rng, 100) : INT64_MIN;
	f->until = splitmix_below(&rng, 5) == 0 ? (int64_t)splitmix_below(&rng, 100) : INT64_MAX;
	f->search = splitmix_below(&rng, 50) == 0;
}

/* Writes the indices of mask as a list, in random order, sometimes with a
 * value repeated.  Returns the count (at most 2 * bits). */
static uint32_t mask_list(uint32_t mask, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < 32; i++)
		if (mask & (1u << i))
			out[n++] = i;
	if (n && splitmix_below(&rng, 8) == 0) {
		out[n] = out[splitmix_below(&rng, n)];
		n++;
	}
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = splitmix_below(&rng, i), tmp = out[i - 1];

		out[i - 1] = out[j];
		out[j] = tmp;
	}
	return n;
}

/* The byte form, as filter_parse() would produce it. */
static void mfilter_to_filter(const struct mfilter *m, struct filter *f)
{
	uint32_t list[64], n;

	filter_init(f);
	if (m->has_ids) {
		n = mask_list(m->ids, list);
		f->has_ids = true;
		f->ids = n ? malloc(n * 32u) : NULL;
		f->nids = n;
		for (uint32_t i = 0; i < n; i++)
			fill32(f->ids[i], 0x10 + (int)list[i]);
	}
	if (m->has_authors) {
		n = mask_list(m->authors, list);
		f->has_authors = true;
		f->authors = n ? malloc(n * 32u) : NULL;
		f->nauthors = n;
		for (uint32_t i = 0; i < n; i++)
			fill32(f->authors[i], 0x20 + (int)list[i]);
	}
	if (m->has_kinds) {
		n = mask_list(m->kinds, list);
		f->has_kinds = true;
		f->kinds = n ? malloc(n * sizeof(uint32_t)) : NULL;
		f->nkinds = n;
		for (uint32_t i = 0; i < n; i++)
			f->kinds[i] = u_kinds[list[i]];
	}
	for (uint32_t k = 0; k < U_LETTERS; k++) {
		uint32_t l = (k + 3) % U_LETTERS; /* not alphabetical */
		const char *vals[64];
		uint32_t lens[64];

		if (!m->has_tag[l])
			continue;
		n = mask_list(m->tag[l], list);
		for (uint32_t i = 0; i < n; i++) {
			vals[i] = u_vals[list[i]];
			lens[i] = u_val_lens[list[i]];
		}
		f_tag_bytes(f, f_letters[l], n, vals, lens);
	}
	f->since = m->since;
	f->until = m->until;
	if (m->search)
		f->search = strdup("q");
	if (splitmix_below(&rng, 5) == 0) {
		f->has_limit = true;
		f->limit = splitmix_below(&rng, 3);
	}
}

static void random_mevent(struct mevent *e)
{
	e->id = splitmix_below(&rng, U_IDS);
	e->pk = splitmix_below(&rng, U_PKS);
	e->kind = splitmix_below(&rng, U_KINDS);
	e->created_at = splitmix_below(&rng, 101);
	e->ntags = splitmix_below(&rng, 7);
	for (uint32_t t = 0; t < e->ntags; t++) {
		e->tag_letter[t] = splitmix_below(&rng, sizeof(ev_letters) - 1);
		e->tag_val[t] = splitmix_below(&rng, U_VALS);
	}
}

static void mevent_to_event(const struct mevent *m, struct event *ev)
{
	uint8_t id[32], pk[32], sig[64] = { 0 };
	struct event_tag tags[6];

	fill32(id, 0x10 + (int)m->id);
	fill32(pk, 0x20 + (int)m->pk);
	for (uint32_t t = 0; t < m->ntags; t++) {
		tags[t].name = ev_letters[m->tag_letter[t]];
		tags[t].value = u_vals[m->tag_val[t]];
		tags[t].value_len = u_val_lens[m->tag_val[t]];
	}
	ck_assert_int_eq(event_build(ev, id, pk, sig, m->created_at, u_kinds[m->kind], tags,
				     m->ntags, "{}", 2),
			 0);
}

/* The model: one slot per possible name (worker, conn, sub). */
#define M_WORKERS 4
#define M_CONNS 48
#define M_NAMES 8
#define M_SLOTS (M_WORKERS * M_CONNS * M_NAMES)
#define M_MAX_FILTERS 4

struct msub {
	bool live;
	uint32_t serial, nfilters;
	struct mfilter f[M_MAX_FILTERS];
};

struct model {
	struct msub subs[M_SLOTS];
	uint32_t next_serial;
	size_t adds, filters_added;
};

/* Connection ids use all 64 bits and repeat across workers. */
static uint64_t m_conn_id(uint32_t c)
{
	return ((uint64_t)c << 56) | (UINT64_C(0x123456789) * c);
}

/* Subscription ids are 1-3 bytes, some with NULs and high bytes. */
static size_t m_sub_id(uint32_t n, char *out)
{
	out[0] = (char)(n * 37);
	out[1] = '\0';
	out[2] = (char)0xff;
	return 1 + n % 3;
}

static uint32_t slot_of(uint32_t w, uint32_t c, uint32_t n)
{
	return (w * M_CONNS + c) * M_NAMES + n;
}

static void model_add(struct model *m, struct subidx *idx, uint32_t w, uint32_t c, uint32_t n)
{
	struct msub *s = &m->subs[slot_of(w, c, n)];
	struct filter *filters;
	char id[3];
	size_t id_len = m_sub_id(n, id);

	s->live = true;
	s->serial = m->next_serial++;
	s->nfilters = splitmix_below(&rng, 8) == 0 ? 0 : 1 + splitmix_below(&rng, M_MAX_FILTERS);
	filters = filters_new(s->nfilters);
	for (uint32_t i = 0; i < s->nfilters; i++) {
		random_mfilter(&s->f[i]);
		mfilter_to_filter(&s->f[i], &filters[i]);
	}
	ck_assert_int_eq(subidx_add(idx, (uint16_t)w, m_conn_id(c), id, id_len, s->serial, filters,
				    s->nfilters),
			 0);
	m->adds++;
	m->filters_added += s->nfilters;
}

static void model_remove(struct model *m, struct subidx *idx, uint32_t w, uint32_t c, uint32_t n)
{
	struct msub *s = &m->subs[slot_of(w, c, n)];
	char id[3];
	size_t id_len = m_sub_id(n, id);

	ck_assert_int_eq(subidx_remove(idx, (uint16_t)w, m_conn_id(c), id, id_len),
			 s->live ? 0 : ERR_NOTFOUND);
	s->live = false;
}

static size_t model_kill_conn(struct model *m, uint32_t w, uint32_t c)
{
	size_t n = 0;

	for (uint32_t i = 0; i < M_NAMES; i++) {
		n += m->subs[slot_of(w, c, i)].live;
		m->subs[slot_of(w, c, i)].live = false;
	}
	return n;
}

static void model_random_op(struct model *m, struct subidx *idx)
{
	uint32_t w = splitmix_below(&rng, M_WORKERS);
	uint32_t c = splitmix_below(&rng, M_CONNS);
	uint32_t n = splitmix_below(&rng, M_NAMES);
	uint32_t op = splitmix_below(&rng, 1000);

	if (op < 700) {
		model_add(m, idx, w, c, n);
	} else if (op < 960) {
		model_remove(m, idx, w, c, n);
	} else if (op < 998) {
		size_t expect = model_kill_conn(m, w, c);

		ck_assert_uint_eq(subidx_remove_conn(idx, (uint16_t)w, m_conn_id(c)), expect);
	} else {
		size_t expect = 0;

		for (uint32_t i = 0; i < M_CONNS; i++)
			expect += model_kill_conn(m, w, i);
		ck_assert_uint_eq(subidx_remove_worker(idx, (uint16_t)w), expect);
	}
}

static void model_check_counts(const struct model *m, const struct subidx *idx)
{
	size_t total = 0;

	for (uint32_t w = 0; w < M_WORKERS; w++) {
		size_t n = 0;

		for (uint32_t i = 0; i < M_CONNS * M_NAMES; i++)
			n += m->subs[w * M_CONNS * M_NAMES + i].live;
		ck_assert_uint_eq(subidx_count_worker(idx, (uint16_t)w), n);
		total += n;
	}
	ck_assert_uint_eq(subidx_count(idx), total);
}

/* Fails with the first difference.  (One check per list rather than per
 * element: libcheck records every passing assertion, which is slow.) */
static void hits_require_same(const struct hits *got, const struct hits *want)
{
	for (size_t i = 0; i < got->n || i < want->n; i++) {
		const struct hit *g = i < got->n ? &got->v[i] : NULL;
		const struct hit *w = i < want->n ? &want->v[i] : NULL;

		if (g && w && hit_cmp(g, w) == 0)
			continue;
		ck_abort_msg("match %zu of %zu/%zu: got serial %ld, want serial %ld", i, got->n,
			     want->n, g ? (long)g->serial : -1L, w ? (long)w->serial : -1L);
	}
}

/* Compares one event's matches with a linear scan; returns how many matched. */
static size_t model_check_event(const struct model *m, struct subidx *idx, struct hits *got,
				struct hits *want)
{
	struct mevent me;
	struct event ev;

	random_mevent(&me);
	mevent_to_event(&me, &ev);
	got->n = 0;
	want->n = 0;
	ck_assert_uint_eq(subidx_match(idx, &ev, hits_collect, got), got->n);
	for (uint32_t i = 0; i < M_SLOTS; i++) {
		const struct msub *s = &m->subs[i];
		bool any = false;

		for (uint32_t j = 0; s->live && j < s->nfilters; j++)
			any = any || ref_matches(&s->f[j], &me);
		if (any)
			hits_collect(want, (uint16_t)(i / (M_CONNS * M_NAMES)),
				     m_conn_id(i / M_NAMES % M_CONNS), s->serial);
	}
	qsort(got->v, got->n, sizeof(*got->v), hit_cmp);
	qsort(want->v, want->n, sizeof(*want->v), hit_cmp);
	hits_require_same(got, want);
	event_free(&ev);
	return want->n;
}

START_TEST(test_differential)
{
	static struct model m;
	struct subidx *idx = subidx_new();
	struct hits got = { 0, 0, NULL }, want = { 0, 0, NULL };
	size_t events = 0, matched = 0;

	memset(&m, 0, sizeof(m));
	rng.state = 20240601;
	for (int round = 0; round < 8; round++) {
		for (int op = 0; op < (round == 0 ? 2500 : 800); op++)
			model_random_op(&m, idx);
		model_check_counts(&m, idx);
		for (int e = 0; e < 800; e++, events++)
			matched += model_check_event(&m, idx, &got, &want);
	}
	/* The run is only meaningful if it was large and matches were common. */
	ck_assert_uint_ge(m.filters_added, 5000);
	ck_assert_uint_ge(events, 6000);
	ck_assert_uint_ge(matched, events * 10);
	free(got.v);
	free(want.v);
	subidx_free(idx);
}
END_TEST

static Suite *subidx_suite(void)
{
	Suite *s = suite_create("subidx");
	TCase *tc = tcase_create("contract");
	TCase *diff = tcase_create("differential");

	tcase_add_test(tc, test_add_and_count);
	tcase_add_test(tc, test_sub_id_length);
	tcase_add_test(tc, test_sub_id_is_bytes_and_scoped);
	tcase_add_test(tc, test_replace_uses_new_filters_and_serial);
	tcase_add_test(tc, test_remove);
	tcase_add_test(tc, test_remove_conn);
	tcase_add_test(tc, test_remove_worker);
	tcase_add_test(tc, test_two_matching_filters_reported_once);
	tcase_add_test(tc, test_found_through_several_buckets_once);
	tcase_add_test(tc, test_candidates_are_checked_fully);
	tcase_add_test(tc, test_filters_that_never_match);
	tcase_add_test(tc, test_removed_not_reported);
	tcase_add_test(tc, test_foreach);
	tcase_add_test(tc, test_foreach_stops);
	suite_add_tcase(s, tc);
	tcase_set_timeout(diff, 300);
	tcase_add_test(diff, test_differential);
	suite_add_tcase(s, diff);
	return s;
}

int main(void)
{
	return suite_run(subidx_suite());
}
