/*
 * workask.h - the admin thread's questions to the workers and their
 * answers (relayctl conns and kick).
 *
 * One question is open at a time, since only the admin thread asks.  It
 * begins one (workask_begin), names each worker it asks (workask_expect)
 * and sends them the question under the returned id, then waits for the
 * answers up to a deadline (workask_finish), which also closes the
 * question.  The rpc thread hands each answer in (workask_answer).  An
 * answer under another id (a late one), from a worker not asked, of
 * another type, or a second one from a worker is dropped.  Each answer is
 * kept as a copy of its body, which the admin thread reads once the
 * question is closed, until workask_end().
 *
 * Threading: workask_answer() on the rpc thread, the rest on the admin
 * thread; the lock guards what both touch.
 */
#ifndef STORED_WORKASK_H
#define STORED_WORKASK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"

/* Worker numbers are below this (STORED_MAX_WORKERS). */
#define WORKASK_WORKERS 256

/* Where a worker stands with the open question. */
enum workask_state {
	WORKASK_NOT_ASKED,
	WORKASK_WAITING,  /* asked, no answer yet */
	WORKASK_ANSWERED, /* its answer is in answers[] */
	WORKASK_GAVE_UP,  /* asked, but no answer will be taken */
};

struct workask {
	pthread_mutex_t lock;
	pthread_cond_t answered;
	uint32_t id;        /* the open question's; 0 while none is open */
	uint32_t last_id;   /* the latest question's */
	uint8_t type;       /* the message type its answers have */
	uint32_t waiting;   /* workers in WORKASK_WAITING */
	uint8_t state[WORKASK_WORKERS]; /* enum workask_state */
	struct buf answers[WORKASK_WORKERS];
};

/* Initialises q (nothing open).  Returns 0 or ERR_NOMEM. */
int workask_init(struct workask *q);

/* Opens a question whose answers are messages of type; returns its id,
 * never 0.  The previous one must have been ended. */
uint32_t workask_begin(struct workask *q, uint8_t type);

/* worker (below WORKASK_WORKERS) is asked: the wait waits for it. */
void workask_expect(struct workask *q, uint16_t worker);

/* rpc thread: the answer of worker to question id, body/len after the
 * header, is copied in.  Returns 0, ERR_NOTFOUND (dropped, see above) or
 * ERR_NOMEM. */
int workask_answer(struct workask *q, uint32_t id, uint16_t worker, uint8_t type,
		   const void *body, size_t len);

/* worker, expected, will not answer (its question could not be sent): the
 * wait stops waiting for it, and it counts as not answering. */
void workask_give_up(struct workask *q, uint16_t worker);

/* Waits until every expected worker has answered or timeout_ms has
 * passed, then closes the question: later answers are dropped. */
void workask_finish(struct workask *q, int timeout_ms);

/* After workask_finish(): whether worker was asked, and its answer's body
 * (borrowed until workask_end()) or NULL when it did not answer. */
bool workask_was_asked(const struct workask *q, uint16_t worker);
const struct buf *workask_answer_of(const struct workask *q, uint16_t worker);

/* Frees the answers; the next question may begin. */
void workask_end(struct workask *q);

#endif
