/*
 * visible.h - how far a new read transaction sees the writer's commits.
 *
 * The broadcaster may hear of a commit's events while the commit's sync is
 * still running (writer.h): live deliveries then do not wait for the disk.
 * It bounds a new subscription's history by what is readable and hands it
 * the rest itself (bcast.h), reading the mark here.  The query thread also
 * waits here until its bound is readable, which it already is unless the
 * broadcaster could not keep an event (out of memory): then it waits at
 * most one sync.
 */
#ifndef STORED_VISIBLE_H
#define STORED_VISIBLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct visible_mark {
	pthread_mutex_t lock;
	pthread_cond_t advanced;
	_Atomic int64_t seq; /* every seq <= this is readable */
};

/* Returns 0 or an errno value from pthread. */
int visible_mark_init(struct visible_mark *m);
void visible_mark_destroy(struct visible_mark *m);

/* Every seq up to seq is readable now (a smaller seq changes nothing). */
void visible_mark_advance(struct visible_mark *m, int64_t seq);

/* Waits up to timeout_ms until seq is readable; true if it is. */
bool visible_mark_wait(struct visible_mark *m, int64_t seq, int timeout_ms);

#endif
