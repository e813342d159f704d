/*
 * histo.h - fixed-bucket latency histograms, rendered the Prometheus way.
 *
 * Every histogram uses the same bucket bounds, so workers' histograms can be
 * summed by stored and shipped over the wire as plain arrays.  counts[i] is
 * the number of observations in bucket i alone (not cumulative); the last
 * bucket is +Inf.  Not thread-safe: each histogram has one writer.
 */
#ifndef COMMON_HISTO_H
#define COMMON_HISTO_H

#include <stdint.h>

struct buf;

#define HISTO_BUCKETS 12

/* Upper bounds in microseconds of buckets 0..HISTO_BUCKETS-2. */
extern const uint64_t histo_bounds_us[HISTO_BUCKETS - 1];

struct histo {
	uint64_t counts[HISTO_BUCKETS];
	uint64_t sum_us;
	uint64_t count;
};

/* Records one observation of us microseconds in h's bucket for it. */
void histo_observe(struct histo *h, uint64_t us);
/* Adds every count and sum of from to into's.  Cannot fail. */
void histo_add(struct histo *into, const struct histo *from);
/*
 * Appends h to out as the Prometheus histogram name, in seconds: HELP (the
 * text help), TYPE, cumulative _bucket{le=...} lines, _sum and _count.
 * name and help are NUL-terminated.  Returns 0, or ERR_NOMEM with some
 * lines possibly missing from out.
 */
int histo_render(struct buf *out, const char *name, const char *help, const struct histo *h);

#endif
