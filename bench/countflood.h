/*
 * countflood.h - a query flood: C connections each keeping W heavy COUNTs
 * (NIP-45) in flight for a while.
 *
 * Used by `loadgen bystander --count-flood C`: while a few clients keep the
 * relay's query threads busy with COUNTs that each read much of the
 * database, does another client's cheap REQ wait for all of them or for
 * one?  Each COUNT has F filters {"kinds":[1],"since":i}, every one matching
 * nearly every note.  Runs on the calling thread, on a loop of its own.
 *
 * fresh: every COUNT on a connection of its own.  C x W connections each
 * send one COUNT, close once it is answered, and are replaced by a new
 * one: a relay that tells cheap clients from heavy ones by their history
 * (stored's query_threads_light) sees only clients it has never met.
 */
#ifndef BENCH_COUNTFLOOD_H
#define BENCH_COUNTFLOOD_H

#include <stdint.h>

struct ws_url;

struct countflood_cfg {
	const struct ws_url *url;
	int conns;         /* connections */
	int window;        /* COUNTs in flight per connection */
	int fresh;         /* 1: one COUNT per connection, conns x window of them */
	int filters;       /* filters per COUNT (the relay's max_filters at most) */
	double duration_s; /* sending stops after this; answers are awaited 15 s more */
	/* Called about every 100 ms on the flood's thread (NULL: none). */
	void (*tick)(void *arg);
	void *tick_arg;
};

struct countflood_stats {
	uint64_t sent, counted, closed, unanswered;
	int conns_opened, conns_lost;
	double elapsed_s; /* first COUNT sent to the last answer */
	char first_closed[160]; /* the message of the first CLOSED */
};

/* Runs the flood.  Returns 0 with *out filled, ERR_NOMEM or ERR_INVAL. */
int countflood_run(const struct countflood_cfg *cfg, struct countflood_stats *out);

#endif
