/*
 * rate.h - events per second over a recent window, from samples of a
 * counter that only grows.
 *
 * The admin thread samples stored's counters (events accepted, queries
 * answered) about once a second; rate_per_second() compares the counter now
 * with the sample taken about `window` seconds ago.  A fixed ring of
 * RATE_SLOTS samples: nothing is allocated.  Not thread-safe (one owner).
 */
#ifndef STORED_RATE_H
#define STORED_RATE_H

#include <stdint.h>

#define RATE_SLOTS 32

struct rate {
	double t[RATE_SLOTS]; /* seconds, increasing */
	uint64_t v[RATE_SLOTS];
	unsigned head, n;     /* head: next slot written; n: samples held */
};

/* Empties r. */
void rate_init(struct rate *r);

/* Records the counter's value v at time t (seconds, monotonic; a t not
 * after the newest sample replaces nothing and is ignored).  The oldest
 * sample goes when the ring is full. */
void rate_add(struct rate *r, double t, uint64_t v);

/*
 * The counter's average growth per second between the newest sample at
 * least `window` seconds before now (or the oldest sample, if none is that
 * old) and the value v at now.  0 when there is no earlier sample, when no
 * time has passed, or when v went backwards.
 */
double rate_per_second(const struct rate *r, double now, uint64_t v, double window);

#endif
