/* recent.c - the ids of the ephemeral events relayed lately (see recent.h). */
#include "recent.h"

#include <stdlib.h>
#include <string.h>
#include "hmap.h"

/* One generation: an open-addressed table at most half full, so a probe
 * ends soon at an empty slot. */
struct recent_gen {
	uint8_t (*ids)[32];
	bool *used;
	size_t n;
};

struct recent_ids {
	struct recent_gen gen[2]; /* [0] fills; [1] is the one before */
	size_t per_gen;           /* ids a generation takes before it turns */
	size_t slots;             /* table size of a generation, a power of two */
	uint64_t k0, k1;          /* the SipHash key */
};

static size_t recent_slot(const struct recent_ids *r, const uint8_t id[32])
{
	return (size_t)hmap_siphash(r->k0, r->k1, id, 32) & (r->slots - 1);
}



/* The slot holding id in g, or the empty one where it would go. */
static size_t recent_find(const struct recent_ids *r, const struct recent_gen *g,
			  const uint8_t id[32])
{
	size_t i = recent_slot(r, id);

	while (g->used[i] && memcmp(g->ids[i], id, 32) != 0)
		i = (i + 1) & (r->slots - 1);
	return i;
}

static void recent_gen_free(struct recent_gen *g)
{
	free(g->ids);
	free(g->used);
}

struct recent_ids *recent_ids_new(size_t capacity)
{
	struct recent_ids *r = calloc(1, sizeof(*r));
	uint64_t key[2];

	if (!r)
		return NULL;
	hmap_seed(key);
	r->k0 = key[0];
	r->k1 = key[1];
	r->per_gen = capacity > 2 ? capacity / 2 : 1;
	for (r->slots = 2; r->slots < 2 * r->per_gen; r->slots *= 2)
		;
	for (int k = 0; k < 2; k++) {
		r->gen[k].ids = malloc(r->slots * sizeof(*r->gen[k].ids));
		r->gen[k].used = calloc(r->slots, sizeof(*r->gen[k].used));
		if (!r->gen[k].ids || !r->gen[k].used) {
			recent_ids_free(r);
			return NULL;
		}
	}
	return r;
}

void recent_ids_free(struct recent_ids *r)
{
	if (!r)
		return;
	recent_gen_free(&r->gen[0]);
	recent_gen_free(&r->gen[1]);
	free(r);
}

bool recent_ids_has(const struct recent_ids *r, const uint8_t id[32])
{
	return r->gen[0].used[recent_find(r, &r->gen[0], id)] ||
	       r->gen[1].used[recent_find(r, &r->gen[1], id)];
}

void recent_ids_add(struct recent_ids *r, const uint8_t id[32])
{
	struct recent_gen *g = &r->gen[0];
	size_t i = recent_find(r, g, id);

	if (g->used[i])
		return;
	if (g->n == r->per_gen) {
		/* The newer generation is full: it becomes the older, and the
		 * older, emptied, takes its place. */
		struct recent_gen old = r->gen[1];

		r->gen[1] = *g;
		memset(old.used, 0, r->slots * sizeof(*old.used));
		old.n = 0;
		r->gen[0] = old;
		g = &r->gen[0];
		i = recent_find(r, g, id);
	}
	memcpy(g->ids[i], id, 32);
	g->used[i] = true;
	g->n++;
}
