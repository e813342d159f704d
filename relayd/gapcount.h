/*
 * gapcount.h - counting the live deliveries lost between stored and this
 * worker.
 *
 * stored numbers the DELIVER messages of each worker 1, 2, 3, ... from the
 * worker's latest HELLO on, and stamps each with that HELLO's request id
 * (the "link epoch").  nng's PUB and SUB sockets drop messages when the
 * worker falls behind, oldest first, so a loss shows as a jump in the
 * numbers, and a loss at the start of a link (the first deliveries after a
 * worker was stopped, say) as a first number above 1.  Deliveries stamped
 * with an earlier epoch were published before stored took this worker's
 * latest HELLO; they are still delivered, but their numbers belong to the
 * old count and say nothing about this one.  Service thread only.
 */
#ifndef RELAYD_GAPCOUNT_H
#define RELAYD_GAPCOUNT_H

#include <stdint.h>

struct gapcount {
	uint32_t epoch; /* request id of the HELLO the current count started with */
	uint64_t last;  /* last number seen in this epoch (0: none yet) */
};

/* Starts a new count: the worker just sent the HELLO with request id epoch. */
void gapcount_restart(struct gapcount *g, uint32_t epoch);

/* Takes DELIVER number seq stamped with epoch; returns how many deliveries
 * of the current epoch were lost just before it. */
uint64_t gapcount_take(struct gapcount *g, uint32_t epoch, uint64_t seq);

#endif
