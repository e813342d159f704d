/*
 * idxwork.h - the synthetic workload of idxbench: what every design matches.
 *
 * It owns the authors (1000 keys), the thread roots that #e filters and e
 * tags name, the unsigned events, the subscriptions' filters and the
 * bystander's filter.  All of them come from splitmix64 streams, so one
 * --seed gives the same workload on every machine and every design sees the
 * same subscriptions: that is what lets idxbench compare their callbacks and
 * checksums.  A workload is read-only once built, so the threads of a design
 * may share it.
 *
 * It also holds the few helpers both idxbench files use: they exit the
 * benchmark on failure, which is all a benchmark can do.
 */
#ifndef BENCH_IDXWORK_H
#define BENCH_IDXWORK_H

#include <stddef.h>
#include <stdint.h>

struct event;
struct filter;
struct subidx;

struct idxwork;

/* First state of the bystander's stream for idxwork_byst_filter(). */
#define IDXWORK_BYST_SEED UINT64_C(0xb5)

/* Builds the authors, roots and nevents events from seed, and the seed of
 * the nsubs subscriptions.  Exits on failure (out of memory). */
struct idxwork *idxwork_new(size_t nsubs, size_t nevents, uint64_t seed);

/* Frees the workload and its events.  NULL-safe. */
void idxwork_free(struct idxwork *w);

/* The events, *n of them; borrowed until idxwork_free(). */
const struct event *idxwork_events(const struct idxwork *w, size_t *n);

/* Picks the index a subscription of connection conn_id goes into. */
typedef struct subidx *(*idxwork_place_fn)(void *arg, uint64_t conn_id);

/* Adds every subscription to the index place(arg, its conn_id) picks: the
 * same filters, names and serials on every call.  Exits on failure. */
void idxwork_add_subs(const struct idxwork *w, idxwork_place_fn place, void *arg);

/* A bystander's filter: five real authors (busy buckets) and until=1, so it
 * matches no event.  *rng starts at IDXWORK_BYST_SEED and advances.  The
 * caller owns the filter (malloc'ed; subidx_add() takes it). */
struct filter *idxwork_byst_filter(const struct idxwork *w, uint64_t *rng);

/* The splitmix64 finalizer: a good 64-bit hash (stripes, checksums).
 * Inline because idxbench calls it once per match callback. */
static inline uint64_t idxwork_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* malloc() that exits on failure; n may be 0. */
void *idxwork_xmalloc(size_t n);

/* Exits, naming what failed, if rc is an error (common/err.h). */
void idxwork_check(int rc, const char *what);

#endif
