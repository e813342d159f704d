/* rate.c - a counter's recent growth per second (see rate.h). */
#include "rate.h"

#include <string.h>

void rate_init(struct rate *r)
{
	memset(r, 0, sizeof(*r));
}

/* The i-th newest sample (0: newest); i < r->n. */
static unsigned rate_slot(const struct rate *r, unsigned i)
{
	return (r->head + RATE_SLOTS - 1 - i) % RATE_SLOTS;
}

void rate_add(struct rate *r, double t, uint64_t v)
{
	if (r->n && t <= r->t[rate_slot(r, 0)])
		return;
	r->t[r->head] = t;
	r->v[r->head] = v;
	r->head = (r->head + 1) % RATE_SLOTS;
	if (r->n < RATE_SLOTS)
		r->n++;
}

double rate_per_second(const struct rate *r, double now, uint64_t v, double window)
{
	unsigned slot;

	if (r->n == 0)
		return 0;
	slot = rate_slot(r, r->n - 1); /* the oldest, unless a newer one is old enough */
	for (unsigned i = 0; i < r->n; i++) {
		unsigned s = rate_slot(r, i);

		if (r->t[s] <= now - window) {
			slot = s;
			break;
		}
	}
	if (now <= r->t[slot] || v < r->v[slot])
		return 0;
	return (double)(v - r->v[slot]) / (now - r->t[slot]);
}
