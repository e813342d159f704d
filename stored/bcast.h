/*
 * bcast.h - the broadcaster: the one thread that owns the subscription index.
 *
 * It registers and drops subscriptions (in the order each worker sent them),
 * matches every committed or ephemeral event against the index, and
 * publishes one DELIVER per worker with matches, carrying that worker's next
 * sequence number.  Because it sees committed events in commit order, it
 * knows the last seq it delivered; a new subscription is registered at that
 * point and its history query is bounded by it (seq <= last), so the stored
 * part and the live part of a REQ neither overlap nor leave a gap.  Events
 * reach it while their commit's sync still runs (writer.h), so it keeps
 * those until a read transaction sees them (visible.h): the history of a
 * subscription opened meanwhile stops before them, and the ones that match
 * are delivered to it from here, which its worker holds until EOSE.
 * For the operator (BCAST_LIST) it copies the live subscriptions into an
 * admin_job (jobs.h), bounded in number and size.
 */
#ifndef STORED_BCAST_H
#define STORED_BCAST_H

#include <pthread.h>
#include <stdint.h>

struct stored;

/* Starts the thread, its id in *thread (the caller joins it); last_seq is
 * the largest seq already in the database.  Returns 0, or ERR_NOMEM when
 * memory or the thread failed. */
int bcast_start(struct stored *s, int64_t last_seq, pthread_t *thread);

#endif
