/* jobs.c - freeing the inter-thread jobs (see jobs.h). */
#include "jobs.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/err.h"

/* A job's piece of an admin job is finished when the job goes. */
static void admin_job_finish(struct admin_job *a)
{
	if (!a)
		return;
	admin_job_done(a);
	admin_job_release(a);
}

void write_job_free(struct write_job *job)
{
	if (!job)
		return;
	event_free(&job->event);
	admin_job_finish(job->admin);
	free(job);
}

void bcast_job_free(struct bcast_job *job)
{
	if (!job)
		return;
	event_free(&job->event);
	filters_free(job->filters, job->nfilters);
	free(job->viewers);
	admin_job_finish(job->admin);
	free(job);
}

struct admin_job *admin_job_new(enum admin_op op, uint32_t pending, int failed)
{
	struct admin_job *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (op == ADMIN_OP_IMPORT && pending) {
		a->results = calloc(pending, sizeof(*a->results));
		if (!a->results) {
			free(a);
			return NULL;
		}
		a->nresults = pending;
		for (uint32_t i = 0; i < pending; i++)
			a->results[i] = (struct admin_result){ .outcome = failed, .message = "error: not processed" };
	}
	a->op = op;
	a->rc = ERR_CLOSED;
	a->refs = 1;
	a->pending = pending;
	pthread_mutex_init(&a->lock, NULL);
	deadline_cond_init(&a->cond);
	return a;
}

void admin_job_hold(struct admin_job *a)
{
	pthread_mutex_lock(&a->lock);
	a->refs++;
	pthread_mutex_unlock(&a->lock);
}

void admin_job_done(struct admin_job *a)
{
	pthread_mutex_lock(&a->lock);
	if (a->pending)
		a->pending--;
	if (a->pending == 0)
		pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

int admin_job_wait(struct admin_job *a, int timeout_ms)
{
	struct timespec deadline;
	int rc = 0;

	deadline_after_ms(&deadline, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&a->lock);
	while (a->pending && rc == 0)
		rc = pthread_cond_timedwait(&a->cond, &a->lock, &deadline);
	rc = a->pending ? ERR_TIMEOUT : 0;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

static void admin_job_destroy(struct admin_job *a)
{
	filters_free(a->filters, a->nfilters);
	for (uint32_t i = 0; i < a->nsubs; i++)
		filters_free(a->subs[i].filters, a->subs[i].nfilters);
	free(a->subs);
	free(a->results);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a);
}

void admin_job_release(struct admin_job *a)
{
	uint32_t left;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	left = --a->refs;
	pthread_mutex_unlock(&a->lock);
	if (left == 0)
		admin_job_destroy(a);
}

/* About how many bytes of JSON the filters make (for the listing's bound). */
static size_t admin_filters_bytes(const struct filter *filters, uint32_t n)
{
	size_t bytes = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct filter *f = &filters[i];

		bytes += 96 + 67 * ((size_t)f->nids + f->nauthors) + 7 * (size_t)f->nkinds;
		bytes += f->search ? strlen(f->search) + 12 : 0;
		for (uint32_t t = 0; t < f->ntags; t++) {
			bytes += 8;
			for (uint32_t v = 0; v < f->tags[t].nvalues; v++)
				bytes += f->tags[t].lens[v] + 3;
		}
	}
	return bytes;
}

int admin_job_add_sub(struct admin_job *a, uint16_t worker, uint64_t conn_id, const char *sub_id,
		      size_t sub_id_len, uint32_t serial, const struct filter *filters,
		      uint32_t nfilters)
{
	size_t bytes = admin_filters_bytes(filters, nfilters) + sub_id_len + 64;
	struct admin_sub *s, *grown;

	if (a->nsubs >= a->max_subs || (a->nsubs && a->sub_bytes + bytes > a->max_sub_bytes) ||
	    sub_id_len > SUBIDX_SUB_ID_MAX) {
		a->truncated = true;
		return 1;
	}
	/* Capacity doubles: it is full whenever nsubs is 0 or a power of two. */
	if ((a->nsubs & (a->nsubs - 1)) == 0) {
		grown = realloc(a->subs, (a->nsubs ? 2 * (size_t)a->nsubs : 1) * sizeof(*grown));
		if (!grown) {
			a->truncated = true;
			return 1;
		}
		a->subs = grown;
	}
	s = &a->subs[a->nsubs];
	*s = (struct admin_sub){ worker, conn_id, serial, { 0 }, (uint32_t)sub_id_len, NULL, 0 };
	memcpy(s->sub_id, sub_id, sub_id_len);
	s->filters = calloc(nfilters ? nfilters : 1, sizeof(*s->filters));
	for (uint32_t i = 0; s->filters && i < nfilters; i++, s->nfilters++)
		if (filter_copy(&s->filters[i], &filters[i]))
			break;
	if (!s->filters || s->nfilters < nfilters) {
		filters_free(s->filters, s->nfilters);
		a->truncated = true;
		return 1;
	}
	a->nsubs++;
	a->sub_bytes += bytes;
	return 0;
}

void query_job_free(struct query_job *job)
{
	if (!job)
		return;
	filters_free(job->filters, job->nfilters);
	free(job->viewers);
	free(job);
}

void neg_job_free(struct neg_job *job)
{
	if (!job)
		return;
	filter_free(&job->filter);
	free(job->viewers);
	free(job->message);
	free(job->items);
	free(job);
}
