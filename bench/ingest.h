/*
 * ingest.h - the publishing engine: sends events over C connections with at
 * most W EVENTs in flight on each, and times every OK.
 *
 * Used by `loadgen ingest` and as the flood of `loadgen bystander`.  It runs
 * on the calling thread, on a loop of its own, and returns when every event
 * sent has been answered, when every connection is gone, or after
 * timeout_s, whichever comes first.  Events are taken from one shared
 * cursor, so a connection served faster publishes more.
 */
#ifndef BENCH_INGEST_H
#define BENCH_INGEST_H

#include <stdint.h>
#include <stdio.h>

struct ws_url;
struct evfile;
struct hist;

struct ingest_cfg {
	const struct ws_url *url;
	const struct evfile *events;
	uint64_t count;   /* events to send, from the first (<= events->count) */
	int conns;        /* connections */
	int window;       /* EVENTs in flight per connection */
	double timeout_s; /* bound on the whole run */
	/* Where the id of every event answered OK true goes, one lowercase
	 * hex id a line (NULL: nowhere): what the relay promised to keep. */
	FILE *acked;
	/* Called about every 100 ms on the engine's thread (NULL: none). */
	void (*tick)(void *arg);
	void *tick_arg;
	int deflate;      /* offer permessage-deflate: EVENTs go compressed */
};

#define INGEST_MAX_WORKERS 16

/* One second of the run, counted by when the OK arrived. */
struct ingest_second {
	uint32_t accepted, duplicate, rejected;
	uint64_t max_ns; /* slowest OK of the second */
};

struct ingest_stats {
	uint64_t sent, accepted, duplicate, rejected, unanswered, notices;
	int conns_opened, conns_failed, conns_lost; /* lost: closed while in use */
	double elapsed_s;        /* first EVENT sent to last OK received */
	uint64_t wire_out, wire_in; /* bytes written and read, handshakes included */
	struct hist *ok_latency; /* EVENT sent -> its OK; owned by the stats */
	char first_reject[160];  /* the message of the first OK false that was not a duplicate */
	int per_worker[INGEST_MAX_WORKERS + 1]; /* connections per X-Relay-Worker (last: other) */
	struct ingest_second *seconds; /* from the first EVENT sent; owned by the stats */
	uint32_t nseconds;
};

/*
 * Runs the engine.  Returns 0 with *out filled (free with
 * ingest_stats_free), or ERR_NOMEM / ERR_INVAL (bad cfg) with *out empty.
 * A run that lost connections or events still returns 0: the stats say so.
 */
int ingest_run(const struct ingest_cfg *cfg, struct ingest_stats *out);

/* Frees what the stats own. */
void ingest_stats_free(struct ingest_stats *s);

#endif
