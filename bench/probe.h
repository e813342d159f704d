/*
 * probe.h - the bystander: one connection that sends a cheap REQ
 * ({"ids":[<random id>],"limit":1}) every interval and times each until its
 * EOSE, on a thread of its own so that the flood next to it cannot delay
 * the measurement itself.
 *
 * Requests go out on schedule even when earlier ones are still unanswered
 * (up to PROBE_MAX_OUT), so a stall of the relay shows up as many slow
 * samples rather than one; a tick that finds PROBE_MAX_OUT unanswered is
 * counted as skipped.  Every EOSE is followed by a CLOSE.  Samples are filed
 * under the phase that was current when the REQ was sent.
 *
 * A REQ with no EOSE after PROBE_GIVE_UP_NS, or still unanswered
 * PROBE_DRAIN_NS after the probe stops sending, is recorded with the time it
 * had waited (a lower bound) and counted as lost, so a stall can never hide
 * by silencing the probe.
 */
#ifndef BENCH_PROBE_H
#define BENCH_PROBE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "rng.h"

struct ws_url;
struct hist;

#define PROBE_MAX_OUT 16
#define PROBE_PHASES 2 /* 0: baseline (idle relay), 1: under load */
#define PROBE_GIVE_UP_NS (10 * 1000000000ull)
#define PROBE_DRAIN_NS (2 * 1000000000ull)

struct probe {
	/* set before probe_start() */
	const struct ws_url *url;
	long interval_ms;
	double max_s; /* the thread stops by itself after this long */
	/* shared with the thread */
	atomic_int phase; /* 0, 1, or 2 = stop */
	atomic_int state; /* 0 connecting, 1 open, -1 failed or lost */
	/* the thread's own until probe_join() returns */
	pthread_t thread;
	struct hist *lat[PROBE_PHASES];
	uint64_t sent, answered, skipped, closed, lost;
	int worker;
	struct rng rng;
	uint64_t seq;
	struct {
		uint64_t seq, sent_ns;
		int phase, used;
	} out[PROBE_MAX_OUT];
};

/* Starts the thread.  Returns 0, or ERR_NOMEM / ERR_IO (no thread). */
int probe_start(struct probe *p);

/* Waits up to timeout_s for the connection; returns 1 open, 0 otherwise. */
int probe_wait_open(struct probe *p, double timeout_s);

/* Sets the phase samples are filed under (0 or 1). */
void probe_set_phase(struct probe *p, int phase);

/* Stops the thread and waits for it; the stats are then the caller's. */
void probe_join(struct probe *p);

/* Frees the histograms. */
void probe_free(struct probe *p);

#endif
