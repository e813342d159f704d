/*
 * rng.h - a small deterministic random number generator (xoshiro256**).
 *
 * gen must write byte-identical files for the same seed on every machine, so
 * bench/ never uses rand() or random(): all its randomness comes from here.
 * A struct rng is a plain value owned by its caller; not thread-safe (give
 * each thread its own).
 */
#ifndef BENCH_RNG_H
#define BENCH_RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* Seeds r from a 64-bit seed (expanded with splitmix64; any seed is fine). */
void rng_seed(struct rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t rng_next(struct rng *r);

/* A uniform integer in [0, n); n must be > 0. */
uint32_t rng_below(struct rng *r, uint32_t n);

/* A uniform integer in [lo, hi]; lo <= hi. */
uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi);

/* True with probability percent/100. */
int rng_chance(struct rng *r, uint32_t percent);

/* Fills out with len random bytes. */
void rng_bytes(struct rng *r, uint8_t *out, size_t len);

#endif
