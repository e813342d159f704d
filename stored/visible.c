/* visible.c - how far a new read transaction sees the writer's commits (see visible.h). */
#include "visible.h"

#include <errno.h>
#include <time.h>

#include "../common/deadline.h"

int visible_mark_init(struct visible_mark *m)
{
	int rc;

	atomic_init(&m->seq, 0);
	if ((rc = pthread_mutex_init(&m->lock, NULL)))
		return rc;
	if ((rc = deadline_cond_init(&m->advanced)))
		pthread_mutex_destroy(&m->lock);
	return rc;
}

void visible_mark_destroy(struct visible_mark *m)
{
	pthread_cond_destroy(&m->advanced);
	pthread_mutex_destroy(&m->lock);
}

void visible_mark_advance(struct visible_mark *m, int64_t seq)
{
	if (seq <= atomic_load(&m->seq))
		return;
	pthread_mutex_lock(&m->lock);
	if (seq > atomic_load(&m->seq))
		atomic_store(&m->seq, seq);
	pthread_cond_broadcast(&m->advanced);
	pthread_mutex_unlock(&m->lock);
}

bool visible_mark_wait(struct visible_mark *m, int64_t seq, int timeout_ms)
{
	struct timespec until;
	bool reached;

	if (seq <= atomic_load(&m->seq))
		return true;
	deadline_after_ms(&until, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&m->lock);
	while (seq > atomic_load(&m->seq))
		if (pthread_cond_timedwait(&m->advanced, &m->lock, &until) == ETIMEDOUT)
			break;
	reached = seq <= atomic_load(&m->seq);
	pthread_mutex_unlock(&m->lock);
	return reached;
}
