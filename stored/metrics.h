/*
 * metrics.h - the relay-wide snapshot stored publishes to every worker.
 *
 * Once a second a thread renders stored's own counters and every worker's
 * last report (WORKER_STATS) as Prometheus text, plus a short JSON summary
 * for the status page, and publishes both as one METRICS message on
 * stored-pub.ipc.  Any worker then answers GET /metrics from its copy, so
 * a scrape needs no round trip and sees the whole relay.  The same thread
 * publishes POLICY (NIP-86 relay texts and blocked addresses) each second.
 */
#ifndef STORED_METRICS_H
#define STORED_METRICS_H

#include <pthread.h>

struct stored;

/* Starts the publishing thread.  Returns 0 or ERR_DB / ERR_NOMEM. */
int metrics_start(struct stored *s);
/* Stops it (after the stopping flag is set) and waits for it. */
void metrics_stop(struct stored *s);

#endif
