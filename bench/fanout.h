/*
 * fanout.h - the parts of `loadgen fanout` shared between its two files:
 * fanout_subs.c (subscriber threads, each with its own loop, that time
 * every delivery) and fanout.c (the publisher and the report).
 *
 * Every published event carries "bench seq=<n> t=<ns>" at the start of its
 * content, where t is clock_ns() just before the event was signed; a
 * subscriber's latency sample is clock_ns() on delivery minus t.  Each
 * subscriber keeps a bitmap of the seqs it has seen, so duplicates are
 * counted apart and missing deliveries are exact.
 */
#ifndef BENCH_FANOUT_H
#define BENCH_FANOUT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ws_url;
struct ws_loop;
struct ws_conn;
struct hist;

struct fo_sub {
	struct fo_thread *t;
	struct ws_conn *ws;
	uint8_t *seen; /* bitmap of seqs, max_events bits */
	bool opened, ready, refused; /* refused: CLOSED instead of EOSE */
};

struct fo_thread {
	/* set before fo_thread_start() */
	const struct ws_url *url;
	bool timeline;     /* keep worst_us */
	int nsubs;
	uint32_t max_events;
	double max_s;      /* the thread stops by itself after this long */
	atomic_int *stop;  /* shared by all threads */
	bool deflate;      /* offer permessage-deflate */
	/* read by the publisher while running */
	atomic_int opened; /* connections whose handshake succeeded */
	atomic_int ready;  /* subscriptions that had their EOSE */
	atomic_int lost;   /* connections that failed or closed */
	atomic_uint_fast64_t got; /* deliveries, duplicates excluded */
	atomic_uint_fast64_t last_ns; /* clock_ns() of the latest delivery */
	/* the thread's own until fo_thread_join() */
	pthread_t th;
	struct ws_loop *loop;
	struct fo_sub *subs;
	int next_connect, pending;
	struct hist *lat;
	uint32_t *worst_us; /* --timeline: per seq, the slowest delivery + 1 (0: none) */
	uint64_t dup, unparsed, closed_msgs;
};

/* Allocates and starts a subscriber thread for t->nsubs subscribers.
 * Returns 0, or ERR_NOMEM / ERR_IO (no thread started). */
int fo_thread_start(struct fo_thread *t);

/* CPU seconds the thread has used so far (any thread may ask). */
double fo_thread_cpu_s(const struct fo_thread *t);

/* Waits for the thread (it stops once *t->stop is set). */
void fo_thread_join(struct fo_thread *t);

/* Frees what the thread allocated. */
void fo_thread_free(struct fo_thread *t);

/* fanout_timeline.c: records a delivery of seq for the timeline (a no-op
 * without --timeline), and prints the timeline of nthreads threads' events
 * 0..published-1 in windows of window_ms of publish time (rate a second). */
void fo_timeline_note(struct fo_thread *t, uint64_t seq, uint64_t latency_ns);
void fo_timeline_print(const struct fo_thread *th, long nthreads, uint64_t published, long rate,
		       long window_ms);

#endif
