/* jobs.c - freeing the inter-thread jobs (see jobs.h). */
#include "jobs.h"

#include <stdlib.h>

void filters_free(struct filter *filters, uint32_t n)
{
	if (!filters)
		return;
	for (uint32_t i = 0; i < n; i++)
		filter_free(&filters[i]);
	free(filters);
}

void write_job_free(struct write_job *job)
{
	if (!job)
		return;
	event_free(&job->event);
	free(job);
}

void bcast_job_free(struct bcast_job *job)
{
	if (!job)
		return;
	event_free(&job->event);
	filters_free(job->filters, job->nfilters);
	free(job);
}

void query_job_free(struct query_job *job)
{
	if (!job)
		return;
	filters_free(job->filters, job->nfilters);
	free(job);
}
