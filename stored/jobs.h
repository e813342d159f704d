/*
 * jobs.h - the messages stored's threads pass each other through queues.
 *
 * Each job is malloc'ed by its producer and freed by its consumer with the
 * matching *_free function; ownership moves with the pointer.
 */
#ifndef STORED_JOBS_H
#define STORED_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/event.h"
#include "../common/filter.h"
#include "stored.h"
#include "subidx.h"

/* rpc -> writer: store one validated event and answer EVENT_RESULT. */
struct write_job {
	struct rpc_return to;
	uint64_t conn_id;
	struct event event;
};

enum bcast_kind {
	BCAST_EVENT,       /* a committed (seq > 0) or ephemeral (seq 0) event to deliver */
	BCAST_HELLO,       /* a worker (re)connected on a pipe */
	BCAST_SUB_OPEN,    /* register a subscription, maybe start its history query */
	BCAST_SUB_CLOSE,   /* drop one subscription */
	BCAST_CONN_CLOSED, /* drop a connection's subscriptions */
	BCAST_PIPE_GONE,   /* a worker's pipe closed: drop its subscriptions */
};

/* rpc/writer -> bcast. */
struct bcast_job {
	enum bcast_kind kind;
	struct rpc_return to;   /* the request's return path (worker, pipe) */
	int64_t seq;            /* BCAST_EVENT: commit order, 0 if ephemeral */
	struct event event;     /* BCAST_EVENT */
	uint64_t conn_id;
	uint32_t sub_serial;
	uint8_t flags;          /* BCAST_SUB_OPEN: msg_sub_flags */
	uint64_t resume_after;  /* BCAST_SUB_OPEN with MSG_SUB_RESUME */
	char sub_id[SUBIDX_SUB_ID_MAX + 1];
	uint32_t sub_id_len;
	struct filter *filters; /* BCAST_SUB_OPEN: owned */
	uint32_t nfilters;
	uint64_t boot_id;       /* BCAST_HELLO */
};

/* bcast -> query pool: stored events of one subscription with
 * min_seq < seq <= max_seq.  A resume replays every match (up to the relay's
 * max_limit per filter) whatever the filters' own limits. */
struct query_job {
	struct rpc_return to;
	uint64_t conn_id;
	uint32_t sub_serial;
	struct filter *filters; /* owned */
	uint32_t nfilters;
	int64_t min_seq;
	int64_t max_seq;
	bool resume;
	bool count;             /* NIP-45: answer COUNT_RESULT for sub_id */
	char sub_id[SUBIDX_SUB_ID_MAX + 1];
	uint32_t sub_id_len;
};

void write_job_free(struct write_job *job);
void bcast_job_free(struct bcast_job *job);
void query_job_free(struct query_job *job);
/* Frees an array of n filters and the array.  NULL-safe. */
void filters_free(struct filter *filters, uint32_t n);

#endif
