/*
 * stats.c - log-linear latency histogram (see stats.h).
 *
 * Values below 128 get a bucket each.  Above, a value v with its highest set
 * bit at position b (b >= 7) is shifted right by s = b - 6, leaving a
 * mantissa m in [64, 127]; its bucket is 128 + (s - 1) * 64 + (m - 64).
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

#define HIST_LINEAR 128
#define HIST_HALF 64
#define HIST_MAX_SHIFT 34 /* 2^40 ns, about 18 minutes */
#define HIST_BUCKETS (HIST_LINEAR + HIST_MAX_SHIFT * HIST_HALF)

struct hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	long double sum;
	uint64_t buckets[HIST_BUCKETS];
};

struct hist *hist_new(void)
{
	struct hist *h = calloc(1, sizeof(*h));

	if (h)
		h->min = UINT64_MAX;
	return h;
}

void hist_free(struct hist *h)
{
	free(h);
}

static unsigned hist_index(uint64_t v)
{
	unsigned shift;

	if (v < HIST_LINEAR)
		return (unsigned)v;
	shift = (unsigned)(63 - __builtin_clzll(v)) - 6;
	if (shift > HIST_MAX_SHIFT)
		return HIST_BUCKETS - 1;
	return HIST_LINEAR + (shift - 1) * HIST_HALF + (unsigned)((v >> shift) - HIST_HALF);
}

/* The middle of bucket i's range. */
static uint64_t hist_value(unsigned i)
{
	unsigned shift;
	uint64_t m;

	if (i < HIST_LINEAR)
		return i;
	shift = (i - HIST_LINEAR) / HIST_HALF + 1;
	m = (i - HIST_LINEAR) % HIST_HALF + HIST_HALF;
	return (m << shift) + ((1ull << shift) >> 1);
}

void hist_record(struct hist *h, uint64_t ns)
{
	h->buckets[hist_index(ns)]++;
	h->count++;
	h->sum += (long double)ns;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

void hist_merge(struct hist *into, const struct hist *from)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t hist_count(const struct hist *h)
{
	return h->count;
}

static uint64_t hist_clamp(const struct hist *h, uint64_t v)
{
	if (v < h->min)
		return h->min;
	return v > h->max ? h->max : v;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	rank = (uint64_t)ceil((p / 100.0) * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			return hist_clamp(h, hist_value(i));
	}
	return h->max;
}

uint64_t hist_max(const struct hist *h)
{
	return h->count ? h->max : 0;
}

uint64_t hist_min(const struct hist *h)
{
	return h->count ? h->min : 0;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}
