/*
 * stats.h - latency histograms and their percentiles.
 *
 * A struct hist records nanosecond values in log-linear buckets (128 per
 * power of two above 128 ns, so any reported value is within 0.8% of a
 * recorded one) in fixed memory, whatever the number of samples: fan-out
 * records millions.  The exact minimum and maximum are kept as well.
 * Histograms of several threads are combined with hist_merge().
 *
 * A hist is owned by whoever called hist_new(); it is not thread-safe.
 */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdint.h>

struct hist;

/* A new empty histogram, or NULL without memory. */
struct hist *hist_new(void);

/* Frees h.  NULL-safe. */
void hist_free(struct hist *h);

/* Records one value in nanoseconds (values above ~18 minutes are clamped). */
void hist_record(struct hist *h, uint64_t ns);

/* Adds every sample of from to into. */
void hist_merge(struct hist *into, const struct hist *from);

/* Number of samples recorded. */
uint64_t hist_count(const struct hist *h);

/*
 * The p-th percentile (0 < p <= 100) by nearest rank: the smallest bucket
 * value v such that at least p% of the samples are <= v, clamped to the
 * exact min and max.  0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);

/* Exact largest and smallest value recorded; 0 when empty. */
uint64_t hist_max(const struct hist *h);
uint64_t hist_min(const struct hist *h);

/* Mean of the recorded values (exact sum / count); 0 when empty. */
double hist_mean(const struct hist *h);

#endif
