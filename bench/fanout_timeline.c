/*
 * fanout_timeline.c - `loadgen fanout --timeline MS`: when the slow
 * deliveries happened.
 *
 * A p99 says how many deliveries were late, not whether they were late
 * together (a stall of the relay: a checkpoint, a long transaction) or
 * spread out (waiting for a CPU).  Each subscriber thread keeps, per event,
 * the latency of its slowest subscriber (fo_timeline_note); the report
 * merges the threads and prints one line per window of publish time: how
 * many events, and the median and maximum of their worst deliveries.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fanout.h"
#include "stats.h"

void fo_timeline_note(struct fo_thread *t, uint64_t seq, uint64_t latency_ns)
{
	uint64_t us = latency_ns / 1000 + 1; /* 0 stays "not delivered here" */

	if (!t->worst_us || seq >= t->max_events)
		return;
	if (us > UINT32_MAX)
		us = UINT32_MAX;
	if (us > t->worst_us[seq])
		t->worst_us[seq] = (uint32_t)us;
}

/* Per event, the slowest delivery of any thread (0: none arrived). */
static uint32_t fo_timeline_worst(const struct fo_thread *th, long nthreads, uint64_t seq)
{
	uint32_t worst = 0;

	for (long i = 0; i < nthreads; i++)
		if (th[i].worst_us && th[i].worst_us[seq] > worst)
			worst = th[i].worst_us[seq];
	return worst;
}

void fo_timeline_print(const struct fo_thread *th, long nthreads, uint64_t published, long rate,
		       long window_ms)
{
	uint64_t per_window = (uint64_t)rate * (uint64_t)window_ms / 1000;

	if (window_ms <= 0 || nthreads < 1 || !th[0].worst_us)
		return;
	if (per_window == 0)
		per_window = 1;
	for (uint64_t first = 0; first < published; first += per_window) {
		struct hist *h = hist_new();
		uint64_t undelivered = 0;

		if (!h)
			return;
		for (uint64_t seq = first; seq < first + per_window && seq < published; seq++) {
			uint32_t worst = fo_timeline_worst(th, nthreads, seq);

			if (worst)
				hist_record(h, (uint64_t)(worst - 1) * 1000);
			else
				undelivered++;
		}
		printf("timeline at_s=%.3f events=%llu worst_p50_ms=%.3f worst_max_ms=%.3f "
		       "undelivered=%llu\n",
		       (double)first / (double)rate, (unsigned long long)hist_count(h),
		       hist_percentile(h, 50) / 1e6, hist_max(h) / 1e6,
		       (unsigned long long)undelivered);
		hist_free(h);
	}
}
