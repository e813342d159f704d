/*
 * idxwork.c - idxbench's synthetic workload (see idxwork.h): authors, roots,
 * unsigned events, the subscriptions' filters and the bystander's filter.
 *
 * The filters mimic a social client: home feeds (authors), notifications
 * (#p), threads (#e), some global feeds (kinds only) and a few match-all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/event.h"
#include "../common/filter.h"
#include "../common/hex.h"
#include "../stored/subidx.h"
#include "idxwork.h"

#define NPUB 1000  /* distinct authors */
#define NROOT 2000 /* events that #e filters and e tags point at */
#define WORKERS 4  /* relayd workers the connections are spread over */
#define SUBS_PER_CONN 4

struct idxwork {
	uint8_t pub[NPUB][32];
	char pubhex[NPUB][65], roothex[NROOT][65];
	struct event *events;
	size_t nsubs, nevents;
	uint64_t sub_seed; /* every design draws the same subscriptions from it */
};

void *idxwork_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "idxbench: out of memory\n");
		exit(1);
	}
	return p;
}

void idxwork_check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "idxbench: %s: %s\n", what, err_name(rc));
		exit(1);
	}
}

/* splitmix64: the same stream from the same --seed on every machine.  Not
 * bench/rng.h (xoshiro): this stream defines the workload, and changing it
 * would make results incomparable with earlier runs. */
static uint32_t draw_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(idxwork_mix64(*s += UINT64_C(0x9e3779b97f4a7c15)) % n);
}

static void draw_bytes(uint64_t *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)draw_below(s, 256);
}

/* ---- filters ---- */

static void f_authors(struct filter *f, const struct idxwork *w, uint64_t *rng, uint32_t n)
{
	f->has_authors = true, f->nauthors = n;
	f->authors = idxwork_xmalloc(n * 32u);
	for (uint32_t i = 0; i < n; i++)
		memcpy(f->authors[i], w->pub[draw_below(rng, NPUB)], 32);
}

static void f_kinds(struct filter *f, uint32_t a, uint32_t b)
{
	f->has_kinds = true, f->nkinds = b ? 2 : 1;
	f->kinds = idxwork_xmalloc(2 * sizeof(uint32_t));
	f->kinds[0] = a, f->kinds[1] = b;
}

/* `#name` with n values drawn from pool (64-character hex strings). */
static void f_tag(struct filter *f, char name, const char (*pool)[65], uint32_t npool,
		  uint64_t *rng, uint32_t n)
{
	struct filter_tag *t = f->tags = idxwork_xmalloc(sizeof(*t));

	f->ntags = 1, t->name = name, t->nvalues = n;
	t->values = idxwork_xmalloc(n * sizeof(char *));
	t->lens = idxwork_xmalloc(n * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		t->values[i] = memcpy(idxwork_xmalloc(65), pool[draw_below(rng, npool)], 65);
		t->lens[i] = 64;
	}
}

/* Home feeds (authors, 75%), notifications (#p), threads (#e), some global
 * feeds (kinds only, 2.5%) and a few match-all with a limit (0.5%). */
static void make_filter(const struct idxwork *w, uint64_t *rng, struct filter *f)
{
	uint32_t r = draw_below(rng, 1000);

	filter_init(f);
	if (r < 750) {
		f_authors(f, w, rng, 1 + draw_below(rng, 20));
		if (draw_below(rng, 2))
			f_kinds(f, 1, 0);
	} else if (r < 870) {
		f_tag(f, 'p', w->pubhex, NPUB, rng, 1);
		f_kinds(f, 1, 7);
	} else if (r < 970) {
		f_tag(f, 'e', w->roothex, NROOT, rng, 1 + draw_below(rng, 3));
	} else {
		if (r < 995)
			f_kinds(f, draw_below(rng, 2) ? 1 : 7, 0);
		f->has_limit = true, f->limit = 50;
	}
}

struct filter *idxwork_byst_filter(const struct idxwork *w, uint64_t *rng)
{
	struct filter *f = idxwork_xmalloc(sizeof(*f));

	filter_init(f);
	f_authors(f, w, rng, 5);
	f->until = 1;
	return f;
}

/* ---- subscriptions ---- */

static uint64_t sub_conn(size_t i)
{
	return i / SUBS_PER_CONN + 1;
}

/* Adds subscription i, drawing its filter from *rng (called in order of i). */
static void add_sub(struct subidx *idx, const struct idxwork *w, uint64_t *rng, size_t i)
{
	struct filter *f = idxwork_xmalloc(sizeof(*f));
	char sid[16];
	uint64_t conn = sub_conn(i);

	make_filter(w, rng, f);
	snprintf(sid, sizeof(sid), "s%zu", i % SUBS_PER_CONN);
	idxwork_check(subidx_add(idx, (uint16_t)(conn % WORKERS), conn, sid, strlen(sid),
				 (uint32_t)i, f, 1),
		      "subidx_add");
}

void idxwork_add_subs(const struct idxwork *w, idxwork_place_fn place, void *arg)
{
	uint64_t rng = w->sub_seed;

	for (size_t i = 0; i < w->nsubs; i++)
		add_sub(place(arg, sub_conn(i)), w, &rng, i);
}

/* ---- events ---- */

/* A kind 1 note (70%) or a kind 7 reaction; e tags name roots, p tags authors. */
static void make_event(const struct idxwork *w, uint64_t *rng, size_t i, struct event *ev)
{
	uint8_t id[32], sig[64] = { 0 };
	struct event_tag tags[3];
	uint32_t nt = 0, kind = draw_below(rng, 10) < 7 ? 1 : 7;
	uint32_t np = kind == 7 ? 1 : draw_below(rng, 3);

	draw_bytes(rng, id, sizeof(id));
	if (kind == 7 || draw_below(rng, 2))
		tags[nt++] = (struct event_tag){ 'e', 64, w->roothex[draw_below(rng, NROOT)] };
	while (np--)
		tags[nt++] = (struct event_tag){ 'p', 64, w->pubhex[draw_below(rng, NPUB)] };
	idxwork_check(event_build(ev, id, w->pub[draw_below(rng, NPUB)], sig,
				  1700000000 + (int64_t)i, kind, tags, nt, "{}", 2),
		      "event_build");
}

/* The authors' keys, then the roots' ids, both from *seed. */
static void make_keys(struct idxwork *w, uint64_t *seed)
{
	uint8_t root[32];

	for (int i = 0; i < NPUB; i++) {
		draw_bytes(seed, w->pub[i], 32);
		hex_encode(w->pub[i], 32, w->pubhex[i]);
	}
	for (int i = 0; i < NROOT; i++) {
		draw_bytes(seed, root, 32);
		hex_encode(root, 32, w->roothex[i]);
	}
}

/* The order of the draws is the workload: keys, then the subscriptions'
 * seed, then the events. */
struct idxwork *idxwork_new(size_t nsubs, size_t nevents, uint64_t seed)
{
	struct idxwork *w = idxwork_xmalloc(sizeof(*w));

	make_keys(w, &seed);
	w->nsubs = nsubs, w->nevents = nevents, w->sub_seed = idxwork_mix64(seed);
	w->events = idxwork_xmalloc(nevents * sizeof(*w->events));
	for (size_t i = 0; i < nevents; i++)
		make_event(w, &seed, i, &w->events[i]);
	return w;
}

void idxwork_free(struct idxwork *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nevents; i++)
		event_free(&w->events[i]);
	free(w->events);
	free(w);
}

const struct event *idxwork_events(const struct idxwork *w, size_t *n)
{
	*n = w->nevents;
	return w->events;
}
