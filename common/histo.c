/* histo.c - latency histograms (see histo.h). */
#include "histo.h"

#include <stdio.h>

#include "buf.h"
#include "err.h"

const uint64_t histo_bounds_us[HISTO_BUCKETS - 1] = {
	250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000,
};

void histo_observe(struct histo *h, uint64_t us)
{
	int i = 0;

	while (i < HISTO_BUCKETS - 1 && us > histo_bounds_us[i])
		i++;
	h->counts[i]++;
	h->sum_us += us;
	h->count++;
}

void histo_add(struct histo *into, const struct histo *from)
{
	for (int i = 0; i < HISTO_BUCKETS; i++)
		into->counts[i] += from->counts[i];
	into->sum_us += from->sum_us;
	into->count += from->count;
}

int histo_render(struct buf *out, const char *name, const char *help, const struct histo *h)
{
	char line[256];
	uint64_t cumulative = 0;
	int failed = 0;

	snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	failed |= buf_append_str(out, line);
	for (int i = 0; i < HISTO_BUCKETS; i++) {
		cumulative += h->counts[i];
		if (i < HISTO_BUCKETS - 1)
			snprintf(line, sizeof(line), "%s_bucket{le=\"%g\"} %llu\n", name,
				 (double)histo_bounds_us[i] / 1e6, (unsigned long long)cumulative);
		else
			snprintf(line, sizeof(line), "%s_bucket{le=\"+Inf\"} %llu\n", name,
				 (unsigned long long)cumulative);
		failed |= buf_append_str(out, line);
	}
	snprintf(line, sizeof(line), "%s_sum %.6f\n%s_count %llu\n", name, (double)h->sum_us / 1e6,
		 name, (unsigned long long)h->count);
	failed |= buf_append_str(out, line);
	return failed ? ERR_NOMEM : 0;
}
