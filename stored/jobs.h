/*
 * jobs.h - the messages stored's threads pass each other through queues.
 *
 * Each job is malloc'ed by its producer and freed by its consumer with the
 * matching *_free function; ownership moves with the pointer.
 */
#ifndef STORED_JOBS_H
#define STORED_JOBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/event.h"
#include "../common/filter.h"
#include "../common/neg.h"
#include "stored.h"
#include "subidx.h"

struct admin_job;

/*
 * rpc -> writer: store one validated event and answer EVENT_RESULT.
 * admin -> writer: with admin set, an operator's job instead: an event to
 * import (admin->op ADMIN_OP_IMPORT; its outcome goes to
 * admin->results[admin_index], not to a worker) or, without an event, an
 * operation the writer carries out between two batches.
 */
struct write_job {
	struct rpc_return to;
	uint64_t conn_id;
	struct event event;
	struct admin_job *admin; /* NULL for a worker's event; else holds a reference */
	uint32_t admin_index;
	/* For the write-policy plugin (plugin.h): enum plugin_source, the
	 * client's address ("" for an import) and when stored received it. */
	uint8_t source;
	char source_info[64];
	int64_t received_at;
};

enum bcast_kind {
	BCAST_EVENT,       /* a committed (seq > 0) or ephemeral (seq 0) event to deliver */
	BCAST_HELLO,       /* a worker (re)connected on a pipe */
	BCAST_SUB_OPEN,    /* register a subscription, maybe start its history query */
	BCAST_SUB_CLOSE,   /* drop one subscription */
	BCAST_CONN_CLOSED, /* drop a connection's subscriptions */
	BCAST_PIPE_GONE,   /* a worker's pipe closed: drop its subscriptions */
	BCAST_LIST,        /* admin: copy the live subscriptions into admin->subs */
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
	uint8_t (*viewers)[32]; /* BCAST_SUB_OPEN: who may read private kinds; owned */
	uint32_t nviewers;
	uint64_t boot_id;       /* BCAST_HELLO */
	struct admin_job *admin; /* BCAST_LIST: holds a reference */
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
	uint8_t (*viewers)[32]; /* who may read private kinds (query_sql.h); owned */
	uint32_t nviewers;
	int64_t min_seq;
	int64_t max_seq;
	bool resume;
	bool replay;            /* SUB_REPLAY: every match in (min_seq, max_seq] */
	bool count;             /* NIP-45: answer COUNT_RESULT for sub_id */
	bool neg;               /* NIP-77: read filters[0]'s items for session
				   neg_serial (negsess.h) */
	uint64_t neg_serial;
	char sub_id[SUBIDX_SUB_ID_MAX + 1];
	uint32_t sub_id_len;
};

/* rpc -> negentropy thread: a client's NIP-77 message, or a connection
 * or worker gone; query pool -> negentropy thread: a session's items
 * (negsess.h). */
enum neg_job_kind {
	NEG_JOB_OPEN, NEG_JOB_MSG, NEG_JOB_CLOSE, NEG_JOB_CONN_CLOSED, NEG_JOB_WORKER_GONE,
	NEG_JOB_ITEMS,
};

/* What a query thread read for a session. */
enum neg_read {
	NEG_READ_OK,
	NEG_READ_TOO_MANY, /* more than neg_max_records matched */
	NEG_READ_FAILED,   /* SQLite failed or the time limit cut it */
};

struct neg_job {
	enum neg_job_kind kind;
	struct rpc_return to;
	uint64_t conn_id;
	char sub_id[SUBIDX_SUB_ID_MAX];
	uint32_t sub_id_len;
	struct filter filter;   /* OPEN: owned */
	uint8_t (*viewers)[32]; /* OPEN: owned */
	uint32_t nviewers;
	uint8_t *message;       /* OPEN, MSG: owned */
	size_t message_len;
	uint64_t serial;        /* ITEMS: the session's */
	enum neg_read status;
	struct neg_item *items; /* ITEMS: sorted, owned */
	size_t nitems;
};

/* What an operator's request asks of the writer or the broadcaster. */
enum admin_op {
	ADMIN_OP_IMPORT,     /* write_jobs carrying events; results[] filled */
	ADMIN_OP_CHECKPOINT, /* PRAGMA wal_checkpoint(TRUNCATE) */
	ADMIN_OP_VACUUM,
	ADMIN_OP_BAN,        /* pubkey, reason, now */
	ADMIN_OP_UNBAN,      /* pubkey */
	ADMIN_OP_DELETE,     /* the events matching any of filters */
	ADMIN_OP_LIST_SUBS,  /* bcast copies up to max_subs subscriptions */
	ADMIN_OP_MANAGE,     /* a NIP-86 change: statement manage, with pubkey
				(or event id), reason, text2 and now */
};

/* The NIP-86 changes the writer carries out (maint.c). */
enum manage_stmt {
	MANAGE_ALLOW_PUBKEY,   /* pubkey, reason */
	MANAGE_UNALLOW_PUBKEY, /* pubkey */
	MANAGE_BAN_EVENT,      /* pubkey = the event id, reason; deletes it too */
	MANAGE_ALLOW_EVENT,    /* pubkey = the event id */
	MANAGE_ALLOW_KIND,     /* now = the kind */
	MANAGE_DISALLOW_KIND,  /* now = the kind */
	MANAGE_BLOCK_IP,       /* text2 = the address, reason */
	MANAGE_UNBLOCK_IP,     /* text2 = the address */
	MANAGE_SET_INFO,       /* text2 = name|description|icon, reason = the value */
	MANAGE_COUNT
};

/* One import's outcome (enum ingest_outcome) and its OK message (static,
 * or text: a plugin's refusal, plugin.h). */
struct admin_result {
	int outcome;
	const char *message;
	char text[224];
};

/* A copy of one live subscription, for the listing. */
struct admin_sub {
	uint16_t worker;
	uint64_t conn_id;
	uint32_t serial;
	char sub_id[SUBIDX_SUB_ID_MAX];
	uint32_t sub_id_len;
	struct filter *filters; /* owned */
	uint32_t nfilters;
};

/*
 * admin -> writer or bcast: an operator's request and the slot its answer
 * comes back in.  The admin thread makes it (one reference, `pending`
 * pieces of work), hands a reference with each job it queues, and waits
 * (bounded) until the workers have finished every piece; a job's free
 * function finishes its piece and drops its reference.  Whoever drops the
 * last reference frees it, so an admin thread that gave up waiting never
 * frees what the writer still uses.  The outputs are read only after
 * admin_job_wait() returned 0.
 */
struct admin_job {
	enum admin_op op;
	/* inputs */
	uint8_t pubkey[32];     /* BAN, UNBAN */
	char reason[256];       /* BAN, MANAGE */
	char text2[256];        /* MANAGE */
	enum manage_stmt manage; /* MANAGE */
	int64_t now;            /* BAN: created_at of the ban */
	struct filter *filters; /* DELETE: owned */
	uint32_t nfilters;
	uint32_t max_subs;      /* LIST_SUBS: copy at most this many ... */
	size_t max_sub_bytes;   /* ... and about this many bytes of filters */
	/* outputs */
	int rc;                 /* 0 or ERR_*; ERR_CLOSED until the work is done */
	int64_t values[3];      /* CHECKPOINT: busy, wal frames, checkpointed;
				   DELETE: events deleted; BAN, UNBAN: rows changed */
	struct admin_result *results; /* IMPORT: nresults, each preset to failed */
	uint32_t nresults;
	struct admin_sub *subs; /* LIST_SUBS: nsubs copies; total in the index */
	uint32_t nsubs;
	size_t sub_bytes, total_subs;
	bool truncated;
	/* completion, private to jobs.c */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t refs, pending;
};

/*
 * A new job of kind op with one reference (the caller's) awaiting pending
 * pieces of work; for ADMIN_OP_IMPORT, nresults = pending results, each
 * preset to outcome `failed` with message "error: not processed".  NULL
 * when out of memory.
 */
struct admin_job *admin_job_new(enum admin_op op, uint32_t pending, int failed);
/* Takes another reference, for a job that will carry it to another thread. */
void admin_job_hold(struct admin_job *a);
/* Marks one piece of work finished and wakes the waiter. */
void admin_job_done(struct admin_job *a);
/* Waits until every piece is finished (0) or timeout_ms passed (ERR_TIMEOUT). */
int admin_job_wait(struct admin_job *a, int timeout_ms);
/* Drops a reference; the last one frees the job and all it owns.  NULL-safe. */
void admin_job_release(struct admin_job *a);
/*
 * LIST_SUBS: appends a deep copy of one subscription unless the listing is
 * full (max_subs, or max_sub_bytes of filters, counting an estimate of their
 * JSON).  Returns 0, or 1 when full (truncated set) or out of memory.
 */
int admin_job_add_sub(struct admin_job *a, uint16_t worker, uint64_t conn_id, const char *sub_id,
		      size_t sub_id_len, uint32_t serial, const struct filter *filters,
		      uint32_t nfilters);

/* Free functions.  A job carrying an admin reference also finishes its
 * piece of that admin job (admin_job_done) and drops the reference. */
void write_job_free(struct write_job *job);
void bcast_job_free(struct bcast_job *job);
void query_job_free(struct query_job *job);
void neg_job_free(struct neg_job *job);

#endif
