/* gapcount.c - lost live deliveries, by sequence number (see gapcount.h). */
#include "gapcount.h"

void gapcount_restart(struct gapcount *g, uint32_t epoch)
{
	g->epoch = epoch;
	g->last = 0;
}

uint64_t gapcount_take(struct gapcount *g, uint32_t epoch, uint64_t seq)
{
	uint64_t lost;

	if (epoch != g->epoch)
		return 0;
	/* One pipe keeps its order, so seq <= last cannot happen within an
	 * epoch; if it did, nothing is counted and the count goes on from it. */
	lost = seq > g->last + 1 ? seq - g->last - 1 : 0;
	g->last = seq;
	return lost;
}
