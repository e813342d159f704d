/*
 * turnstorm.c - `build/bench/turnstorm [SENDERS [ITEMS]]`: a storm of query
 * jobs through stored's turn queue (stored/turnqueue.h) alone, no sockets.
 *
 * After a stored restart every client connection's subscriptions come back
 * as resume jobs at once, from connections the new stored has never seen:
 * none is known cheap, so with the consumers not kept for cheap ones all
 * busy, none of these jobs may run yet.  This pushes SENDERS x ITEMS such
 * jobs (default 10,000 x 20) while three of four consumers hold jobs and
 * the fourth, the kept one, waits; it prints how long the pushes took,
 * which is what stored's rpc thread would spend.  A push that woke the
 * kept consumer for a job it may not take had it walk every waiting sender
 * (bench/RESULTS.md item 46).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../stored/turnqueue.h"

#define STORM_CONSUMERS 4

static double storm_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The kept consumer: pops until the queue is closed and drained. */
static void *storm_kept(void *arg)
{
	struct turn_sender from;
	uintptr_t n = 0;

	while (turnqueue_pop(arg, &from)) {
		turnqueue_done(arg, from, 0);
		n++;
	}
	return (void *)n;
}

int main(int argc, char **argv)
{
	long senders = argc > 1 ? atol(argv[1]) : 10000, items = argc > 2 ? atol(argv[2]) : 20;
	struct turn_sender busy[STORM_CONSUMERS - 1];
	struct timespec settle = { 0, 50 * 1000000L };
	struct turnqueue *q;
	double start, took;
	pthread_t kept;
	void *ran;

	if (senders < 1 || items < 1 || senders > 10000000 || items > 1000) {
		fprintf(stderr, "usage: turnstorm [SENDERS [ITEMS]]\n");
		return 2;
	}
	q = turnqueue_new((size_t)(senders * items) + STORM_CONSUMERS, (size_t)items, true);
	if (!q)
		return 1;
	turnqueue_bound_running(q, 1);
	/* stored's defaults: one of four kept, heavy at 10 ms, marks 60 / 10 s. */
	turnqueue_keep_for_light(q, &(struct turn_reserve){ STORM_CONSUMERS, 1, 10000000,
							    60000000000ull, 10000000000ull });
	for (int i = 0; i < STORM_CONSUMERS - 1; i++) {
		turnqueue_push(q, (struct turn_sender){ 2, (uint64_t)i }, (void *)1);
		turnqueue_pop(q, &busy[i]);
	}
	pthread_create(&kept, NULL, storm_kept, q);
	nanosleep(&settle, NULL);
	start = storm_now_s();
	for (long i = 0; i < items; i++)
		for (long c = 0; c < senders; c++)
			turnqueue_push(q, (struct turn_sender){ 1, (uint64_t)c }, (void *)1);
	took = storm_now_s() - start;
	turnqueue_close(q);
	for (int i = 0; i < STORM_CONSUMERS - 1; i++)
		turnqueue_done(q, busy[i], 0);
	pthread_join(kept, &ran);
	printf("turnstorm: %ld jobs from %ld new connections pushed in %.3f s (%.2f us each);"
	       " then the kept consumer ran %lu\n",
	       senders * items, senders, took, took * 1e6 / (double)(senders * items),
	       (unsigned long)(uintptr_t)ran);
	printf("RESULT mode=turnstorm senders=%ld items=%ld push_s=%.3f\n", senders, items, took);
	turnqueue_free(q);
	return 0;
}
