/* workask.c - questions to the workers and their answers (see workask.h). */
#include "workask.h"

#include <string.h>

#include "../common/deadline.h"
#include "../common/err.h"

int workask_init(struct workask *q)
{
	memset(q, 0, sizeof(*q));
	if (pthread_mutex_init(&q->lock, NULL))
		return ERR_NOMEM;
	if (deadline_cond_init(&q->answered)) {
		pthread_mutex_destroy(&q->lock);
		return ERR_NOMEM;
	}
	return 0;
}

uint32_t workask_begin(struct workask *q, uint8_t type)
{
	uint32_t id;

	pthread_mutex_lock(&q->lock);
	if (++q->last_id == 0)
		q->last_id = 1;
	id = q->id = q->last_id;
	q->type = type;
	q->waiting = 0;
	memset(q->state, WORKASK_NOT_ASKED, sizeof(q->state));
	pthread_mutex_unlock(&q->lock);
	return id;
}

void workask_expect(struct workask *q, uint16_t worker)
{
	if (worker >= WORKASK_WORKERS)
		return;
	pthread_mutex_lock(&q->lock);
	if (q->state[worker] == WORKASK_NOT_ASKED) {
		q->state[worker] = WORKASK_WAITING;
		q->waiting++;
	}
	pthread_mutex_unlock(&q->lock);
}

int workask_answer(struct workask *q, uint32_t id, uint16_t worker, uint8_t type,
		   const void *body, size_t len)
{
	int rc = ERR_NOTFOUND;

	if (worker >= WORKASK_WORKERS)
		return ERR_NOTFOUND;
	pthread_mutex_lock(&q->lock);
	if (id != 0 && id == q->id && type == q->type && q->state[worker] == WORKASK_WAITING) {
		buf_reset(&q->answers[worker]);
		rc = buf_append(&q->answers[worker], body, len) ? ERR_NOMEM : 0;
		if (rc == 0) {
			q->state[worker] = WORKASK_ANSWERED;
			q->waiting--;
			pthread_cond_broadcast(&q->answered);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

void workask_give_up(struct workask *q, uint16_t worker)
{
	if (worker >= WORKASK_WORKERS)
		return;
	pthread_mutex_lock(&q->lock);
	if (q->state[worker] == WORKASK_WAITING) {
		q->state[worker] = WORKASK_GAVE_UP;
		q->waiting--;
	}
	pthread_mutex_unlock(&q->lock);
}

void workask_finish(struct workask *q, int timeout_ms)
{
	struct timespec deadline;
	int rc = 0;

	deadline_after_ms(&deadline, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&q->lock);
	while (q->waiting && rc == 0)
		rc = pthread_cond_timedwait(&q->answered, &q->lock, &deadline);
	q->id = 0;
	pthread_mutex_unlock(&q->lock);
}

bool workask_was_asked(const struct workask *q, uint16_t worker)
{
	return worker < WORKASK_WORKERS && q->state[worker] != WORKASK_NOT_ASKED;
}

const struct buf *workask_answer_of(const struct workask *q, uint16_t worker)
{
	return worker < WORKASK_WORKERS && q->state[worker] == WORKASK_ANSWERED ? &q->answers[worker]
										: NULL;
}

void workask_end(struct workask *q)
{
	pthread_mutex_lock(&q->lock);
	q->id = 0;
	for (int w = 0; w < WORKASK_WORKERS; w++)
		buf_free(&q->answers[w]);
	memset(q->state, WORKASK_NOT_ASKED, sizeof(q->state));
	pthread_mutex_unlock(&q->lock);
}
