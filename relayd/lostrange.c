/* lostrange.c - a subscription's lost commit ranges (see lostrange.h). */
#include "lostrange.h"

#include <stddef.h>
#include <stdlib.h>

static bool range_empty(uint64_t after, uint64_t before)
{
	return before <= after + 1;
}

/* The last range gone, the array goes too: most subscriptions never lose
 * a delivery, and one that did should not keep paying for it. */
static void remove_at(struct lost_ranges *l, uint32_t i)
{
	l->r[i] = l->r[--l->n];
	if (l->n == 0) {
		free(l->r);
		*l = (struct lost_ranges){ 0 };
	}
}

/* Room for one more range, growing the array up to LOST_RANGES_MAX. */
static bool make_room(struct lost_ranges *l)
{
	uint32_t cap = l->cap ? l->cap * 2 : 4;
	struct lost_range *r;

	if (l->n < l->cap)
		return true;
	if (l->cap == LOST_RANGES_MAX)
		return false;
	if (cap > LOST_RANGES_MAX)
		cap = LOST_RANGES_MAX;
	r = realloc(l->r, cap * sizeof(*r));
	if (!r)
		return false;
	l->r = r;
	l->cap = cap;
	return true;
}

/* The unasked range added last (only among held ones if held), or NULL. */
static struct lost_range *newest_unasked(struct lost_ranges *l, bool held)
{
	struct lost_range *newest = NULL;

	for (uint32_t i = 0; i < l->n; i++)
		if (!l->r[i].request_id && (!held || l->r[i].held) &&
		    (!newest || l->r[i].before > newest->before))
			newest = &l->r[i];
	return newest;
}

static void join_range(struct lost_range *join, uint64_t after, uint64_t before)
{
	if (after < join->after)
		join->after = after;
	if (before > join->before)
		join->before = before;
}

bool lost_ranges_add(struct lost_ranges *l, uint64_t after, uint64_t before, bool held)
{
	struct lost_range *join;

	if (range_empty(after, before))
		return true;
	/* What arrived between the two is held, and dropped once live if
	 * asked again: one range then costs one replay, not one per loss. */
	if (held && (join = newest_unasked(l, true))) {
		join_range(join, after, before);
		return true;
	}
	if (make_room(l)) {
		l->r[l->n++] = (struct lost_range){ after, before, 0, held };
		return true;
	}
	join = newest_unasked(l, false);
	if (!join)
		return false;
	join_range(join, after, before);
	return true;
}

bool lost_ranges_asked_has(const struct lost_ranges *l, uint64_t seq)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->r[i].request_id && seq > l->r[i].after && seq < l->r[i].before)
			return true;
	return false;
}

void lost_ranges_went_live(struct lost_ranges *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		l->r[i].held = false;
}

void lost_ranges_free(struct lost_ranges *l)
{
	free(l->r);
	*l = (struct lost_ranges){ 0 };
}

bool lost_ranges_answered(struct lost_ranges *l, uint32_t request_id)
{
	for (uint32_t i = 0; request_id && i < l->n; i++) {
		if (l->r[i].request_id == request_id) {
			remove_at(l, i);
			return true;
		}
	}
	return false;
}

void lost_ranges_unask(struct lost_ranges *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		l->r[i].request_id = 0;
}

void lost_ranges_cover(struct lost_ranges *l, uint64_t covered_after, uint64_t covered_to)
{
	uint32_t i = 0;

	while (i < l->n) {
		struct lost_range *r = &l->r[i];
		/* What is left below and above the covered commits. */
		uint64_t below_before = r->before < covered_after + 1 ? r->before : covered_after + 1;
		uint64_t above_after = r->after > covered_to ? r->after : covered_to;
		bool below = !range_empty(r->after, below_before);
		bool above = !range_empty(above_after, r->before);

		if (r->request_id || covered_to <= covered_after) {
			i++;
		} else if (below && above && !make_room(l)) {
			i++; /* no room to split: kept whole */
		} else if (below && above) {
			r = &l->r[i]; /* make_room may have moved the array */
			l->r[l->n++] = (struct lost_range){ above_after, r->before, 0, r->held };
			r->before = below_before;
			i++;
		} else if (below) {
			r->before = below_before;
			i++;
		} else if (above) {
			r->after = above_after;
			i++;
		} else {
			remove_at(l, i); /* all of it came; look at what moved here */
		}
	}
}

struct lost_range *lost_ranges_next_unasked(struct lost_ranges *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!l->r[i].request_id)
			return &l->r[i];
	return NULL;
}
