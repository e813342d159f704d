/* rng.c - xoshiro256** seeded by splitmix64 (see rng.h). */
#include "rng.h"

static uint64_t rng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix(&seed);
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return out;
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
	/* Multiply-shift: unbiased enough for load generation, and exact. */
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

int rng_chance(struct rng *r, uint32_t percent)
{
	return rng_below(r, 100) < percent;
}

void rng_bytes(struct rng *r, uint8_t *out, size_t len)
{
	uint64_t v = 0;

	/* Byte by byte from the low end, so the output is the same on any host. */
	for (size_t i = 0; i < len; i++) {
		if (i % 8 == 0)
			v = rng_next(r);
		out[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
}
