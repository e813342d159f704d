/*
 * stored.h - the stored process's context, shared by its modules.
 *
 * stored has one thread per role, talking through queues:
 *   main        starts the others and waits for a signal (main.c);
 *   rpc         receives every worker request and routes it (rpc.c);
 *   writer      owns the write connection and commits events in groups (writer.c);
 *   bcast       owns the subscription index and publishes deliveries (bcast.c);
 *   query       a small pool answering REQ history from read connections (query.c);
 *   admin       answers the operator's JSON requests (admin*.c); its writes are
 *               jobs for the writer, its listings jobs for bcast;
 *   checkpoint  copies the WAL into the database off the writer (checkpoint.c);
 *   indexer     keeps NIP-50's index in search.db, with search = 1 (search_index.c);
 *   metrics     publishes the relay-wide metrics each second (metrics.c);
 *   backup      copies relay.db for relayctl backup, while one runs (backup.c);
 *   plugin      runs the write-policy plugin, with plugin set (plugin.c);
 *   listencheck keeps the three sockets listening (common/listencheck.c).
 * main.c owns the one struct stored; nothing else is global.
 */
#ifndef STORED_STORED_H
#define STORED_STORED_H

#include <nng/nng.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/config.h"
#include "../common/histo.h"
#include "../common/procstat.h"
#include "diskwatch.h"
#include "search_watermark.h"
#include "visible.h"
#include "workask.h"

struct gate;
struct plugin;
struct queue;
struct recent_ids;
struct turnqueue;

/* Where a reply goes: the worker, and the request pipe it asked on (a reply
 * to a pipe that is gone is dropped: reply.h). */
struct rpc_return {
	uint32_t pipe;
	uint16_t worker;
	uint32_t request_id;
};

/* Why the writer did not store an event: the prefix of its OK message. */
enum stored_reject {
	STORED_REJECT_DUPLICATE, /* "duplicate:" (OK true, nothing new stored) */
	STORED_REJECT_BLOCKED,   /* "blocked:": deleted, vanished or banned */
	STORED_REJECT_ERROR,     /* "error:": the database failed */
	STORED_REJECT_OTHER,
	STORED_NREJECTS
};

/* The write-policy plugin's counters (plugin.h). */
struct stored_plugin_stats {
	atomic_uint_fast64_t accepted, rejected, shadow_rejected;
	atomic_uint_fast64_t timeouts;  /* answers that did not come in time */
	atomic_uint_fast64_t failures;  /* exits and lines that were not answers */
	atomic_uint_fast64_t restarts;  /* starts after the first */
	atomic_uint_fast64_t fail_open; /* events stored without its answer */
	atomic_uint_fast64_t queue_full; /* events refused at once */
};

/* Counters any thread may bump and the admin thread reads. */
struct stored_stats {
	atomic_uint_fast64_t events_accepted; /* OK true, new */
	atomic_uint_fast64_t events_duplicate;
	atomic_uint_fast64_t events_rejected;
	atomic_uint_fast64_t ephemeral_delivered;
	atomic_uint_fast64_t queries;
	atomic_uint_fast64_t deliveries;      /* DELIVER messages published */
	atomic_uint_fast64_t replays;         /* SUB_REPLAY requests taken */
	atomic_uint_fast64_t commits;
	atomic_uint_fast64_t subscriptions;   /* mirrored from the index by bcast */
	atomic_uint_fast64_t workers;         /* workers with a live pipe */
	atomic_uint_fast64_t rpc_bad;         /* undecodable requests dropped */
	/* Replies not sent: their worker was gone or replaced (its clients
	 * already had error:), or had stopped reading (reply.h). */
	atomic_uint_fast64_t replies_dropped;
	atomic_uint_fast64_t rejects[STORED_NREJECTS]; /* by the writer, by reason */
	/* REQ history and COUNT durations: a histogram many threads add to. */
	atomic_uint_fast64_t query_latency[HISTO_BUCKETS];
	atomic_uint_fast64_t query_latency_sum_us;
	struct stored_plugin_stats plugin;
};

#define STORED_MAX_WORKERS 256

/* What a worker last reported (WORKER_STATS), for the admin socket. */
struct stored_worker_report {
	bool present;
	uint32_t pipe;
	uint32_t pid;
	uint64_t boot_id;
	uint64_t started_at;
	uint32_t connections;
	uint32_t subscriptions;
	uint64_t messages_in, messages_out, events_rejected, deliver_gaps;
	uint64_t rate_limited, conns_refused;
	uint64_t lane_refused, reads_paused, requests_on_loop;
	uint64_t listener_restarts, unmasked_closed, store_timeouts, too_big_closed;
	uint64_t pings_sent, ping_timeouts; /* keepalive (relayd/keepalive.h) */
	struct histo ok_latency;
	struct procstat proc; /* its process_* figures */
};

/* Where a listening socket listens, kept so that it can listen again
 * (common/listencheck.h); touched by the listener check's thread only,
 * once the socket is open. */
struct stored_listen {
	nng_listener listener;
	char url[CONFIG_PATH_MAX + 64];
};

/* A worker's reply channel (reply.c); guarded by workers_lock. */
struct reply_channel {
	nng_socket sock;
	bool open;
	bool stalled; /* a send timed out: drop until one succeeds */
	uint64_t boot_id;
	atomic_uint_fast32_t last_pipe; /* a remote worker's newest pipe (reply.c) */
};

struct negsess;

struct stored {
	struct config cfg;
	uint64_t boot_id;
	char db_path[CONFIG_PATH_MAX + 32];
	char search_path[CONFIG_PATH_MAX + 32]; /* NIP-50's index (search_index.h) */
	nng_socket rpc;
	nng_socket pub;
	nng_socket admin;
	struct stored_listen rpc_at, pub_at, admin_at;
	struct listencheck *listencheck; /* keeps the three listening (main.c) */
	nng_socket manage_req;  /* internal: NIP-86 requests to the admin thread */
	struct queue *write_q;
	struct queue *bcast_q;
	struct turnqueue *query_q; /* served per connection in turn */
	struct stored_stats stats;
	pthread_mutex_t workers_lock; /* guards workers[] (admin reads, rpc writes) */
	struct stored_worker_report workers[STORED_MAX_WORKERS];
	struct reply_channel replies[STORED_MAX_WORKERS];
	struct search_watermark search; /* how far NIP-50's index reaches */
	struct visible_mark visible;    /* how far a new read sees commits */
	atomic_bool stopping;
	struct metrics *metrics; /* its thread (metrics.h) */
	struct gate *gate;       /* the rpc thread's checks of ephemeral events (gate.h) */
	struct recent_ids *ephemeral_seen; /* the rpc thread's: ephemeral ids relayed lately */
	struct backup *backup;   /* relayctl backup (backup.h) */
	struct diskwatch disk;   /* free space on data_dir (diskwatch.h; set by writer_start) */
	struct workask ask;      /* relayctl conns and kick: questions to the workers */
	struct plugin *plugin;   /* the write-policy plugin, or NULL (plugin.h) */
	struct negsess *neg;     /* NIP-77 sessions and their thread (negsess.h) */
	struct queue *neg_q;     /* its jobs (struct neg_job, jobs.h) */
};

#endif
