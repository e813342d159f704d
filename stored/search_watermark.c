/* search_watermark.c - how far the full-text index reaches (search_watermark.h). */
#include "search_watermark.h"

#include <errno.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/log.h"

int search_watermark_init(struct search_watermark *wm)
{
	int rc;

	*wm = (struct search_watermark){ 0 };
	if ((rc = pthread_mutex_init(&wm->lock, NULL)))
		return rc;
	if ((rc = deadline_cond_init(&wm->advanced))) {
		pthread_mutex_destroy(&wm->lock);
		return rc;
	}
	if ((rc = deadline_cond_init(&wm->work))) {
		pthread_cond_destroy(&wm->advanced);
		pthread_mutex_destroy(&wm->lock);
	}
	return rc;
}

void search_watermark_destroy(struct search_watermark *wm)
{
	pthread_cond_destroy(&wm->work);
	pthread_cond_destroy(&wm->advanced);
	pthread_mutex_destroy(&wm->lock);
}

bool search_watermark_want(struct search_watermark *wm, int64_t *seq)
{
	bool covered;

	pthread_mutex_lock(&wm->lock);
	if (*seq <= 0)
		*seq = wm->committed;
	covered = !wm->ready || wm->indexed >= *seq;
	if (!covered && wm->wanted < *seq) {
		wm->wanted = *seq;
		pthread_cond_signal(&wm->work);
	}
	pthread_mutex_unlock(&wm->lock);
	return covered;
}

bool search_watermark_wait(struct search_watermark *wm, int64_t seq, int timeout_ms)
{
	struct timespec until;
	bool covered;

	deadline_after_ms(&until, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&wm->lock);
	while (wm->ready && wm->indexed < seq &&
	       pthread_cond_timedwait(&wm->advanced, &wm->lock, &until) != ETIMEDOUT)
		;
	covered = !wm->ready || wm->indexed >= seq;
	pthread_mutex_unlock(&wm->lock);
	return covered;
}

bool search_watermark_await(struct search_watermark *wm, int64_t seq, int timeout_ms)
{
	if (search_watermark_want(wm, &seq) || search_watermark_wait(wm, seq, timeout_ms))
		return true;
	log_info("search index still short of seq %lld: searching what it has", (long long)seq);
	return false;
}

int64_t search_watermark_lag(struct search_watermark *wm)
{
	int64_t lag;

	pthread_mutex_lock(&wm->lock);
	lag = wm->ready && wm->committed > wm->indexed ? wm->committed - wm->indexed : 0;
	pthread_mutex_unlock(&wm->lock);
	return lag;
}

void search_watermark_gone_logged(struct search_watermark *wm)
{
	pthread_mutex_lock(&wm->lock);
	wm->gone_logged = true;
	pthread_mutex_unlock(&wm->lock);
}

void search_watermark_committed(struct search_watermark *wm, int64_t last_seq)
{
	pthread_mutex_lock(&wm->lock);
	if (wm->gone_logged) {
		wm->gone_logged = false;
		wm->gone_pending = true;
		pthread_cond_signal(&wm->work);
	}
	if (last_seq > wm->committed) {
		bool first = wm->committed <= wm->indexed;

		if (first)
			wm->pending_since_ms = deadline_now_ms();
		wm->committed = last_seq;
		/* The indexer sleeps until its next run is due; only the first
		 * pending event or a full batch can bring that forward. */
		if (first || wm->committed - wm->indexed >= wm->wake_lag)
			pthread_cond_signal(&wm->work);
	}
	pthread_mutex_unlock(&wm->lock);
}
