/*
 * splitmix.h - the random number generator of the unit tests (splitmix64).
 *
 * Header-only, like tmpdir.h.  A struct splitmix is a plain value that its
 * test owns; set its state to a seed before the first draw.  The same seed
 * gives the same numbers on every machine, so a failing random test fails
 * again with the same inputs.  Not thread-safe: give each thread its own.
 *
 * Use:  static struct splitmix rng;  rng.state = 42;  splitmix_next(&rng);
 */
#ifndef TESTS_SUPPORT_SPLITMIX_H
#define TESTS_SUPPORT_SPLITMIX_H

#include <stdint.h>

struct splitmix {
	uint64_t state;
};

/* The next 64 random bits from r; advances r.  Any state is valid. */
static inline uint64_t splitmix_next(struct splitmix *r)
{
	uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * A number in [0, n) from one draw of r; n must be > 0.  It is the draw
 * modulo n, so it leans slightly to small numbers; tests do not mind.
 */
static inline uint32_t splitmix_below(struct splitmix *r, uint32_t n)
{
	return (uint32_t)(splitmix_next(r) % n);
}

#endif
