/*
 * relayd.h - a worker process's context, shared by its modules.
 *
 * Threads of a worker:
 *   service  the main thread: it runs the event loop (evloop.h) with
 *            libwebsockets on it.  It alone touches connections, their
 *            queues and their subscriptions (conn.c).
 *   ingress  verify_threads lanes (ingress.c).  Each connection is bound to
 *            one of them (conn slot % n), so a client's messages keep their
 *            order.  They parse JSON, validate and verify events and filters,
 *            and send events to stored themselves.
 *   link     two receive threads for stored's replies and deliveries (link.c).
 *   signals  takes SIGHUP, SIGINT and SIGTERM (main.c).
 * Everything bound for the service thread goes through the mailbox.
 * main.c owns the one struct relayd.  State that one module owns is an
 * opaque struct of that module, held here by pointer.
 */
#ifndef RELAYD_RELAYD_H
#define RELAYD_RELAYD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/config.h"
#include "../common/histo.h"
#include "gapcount.h"

struct conn_table;
struct evloop;
struct ingress;
struct iplimit;
struct link;
struct lws_context;
struct mailbox;
struct nip86;
struct pmdz;
struct policy_state;
struct replay;
struct send_batch;
struct service;

struct relayd_stats {
	atomic_uint_fast64_t messages_in;
	atomic_uint_fast64_t messages_out;
	atomic_uint_fast64_t events_rejected;
	atomic_uint_fast64_t deliver_gaps;
	atomic_uint_fast64_t stale_replies; /* replies for connections already gone */
	atomic_uint_fast64_t rate_limited;  /* messages refused by the per-address limits */
	atomic_uint_fast64_t conns_refused; /* connections over max_connections_per_ip */
	atomic_uint_fast64_t lane_refused;  /* messages a full ingress lane refused */
	atomic_uint_fast64_t reads_paused;  /* connections paused at max_queued_messages */
	atomic_uint_fast64_t requests_on_loop; /* requests the loop parsed itself (ingress.c) */
	atomic_uint_fast64_t store_timeouts; /* requests stored did not answer in time (service.c) */
	atomic_uint_fast64_t too_big_closed; /* connections closed with 1009 (ws.c) */
	atomic_uint_fast64_t pings_sent;    /* keepalive pings written (send.c) */
	atomic_uint_fast64_t ping_timeouts; /* connections closed for not answering one (keepalive.c) */
};

struct relayd {
	/* The configuration is an immutable snapshot that a reload replaces;
	 * read it through relayd_cfg().  The snapshot before the current one is
	 * kept until the next reload, so a thread still reading it is safe. */
	_Atomic(const struct config *) cfg_now;
	const struct config *cfg_retired;
	const char *config_path;
	int instance;               /* the worker id, -i N */
	uint64_t boot_id;
	uint64_t started_at;
	struct evloop *loop;        /* the event loop lws runs on (evloop.h) */
	struct lws_context *lws;
	int listen_fd;              /* our SO_REUSEPORT socket (listen.h) */
	struct mailbox *mailbox;
	struct ingress *ingress;
	struct link *link;          /* the sockets to stored (link.c) */
	struct service *service;    /* service thread only (service.c) */
	struct send_batch *send;    /* service thread only (send.c) */
	struct conn_table *conns;   /* service thread only */
	struct iplimit *iplimit;    /* service thread only */
	struct nip86 *nip86;        /* service thread only (nip86.c) */
	struct replay *replay;      /* service thread only (replay.c) */
	struct pmdz *pmdz;          /* service thread: its one deflater and inflater (pmdz.h) */
	unsigned char *inflated;    /* service thread: an inflated message (wsext.h) */
	size_t inflated_cap;        /* max_message_bytes + 1 */
	struct policy_state *policy; /* service thread: stored's NIP-86 policy */
	struct gapcount delivered;  /* service thread: DELIVER numbers, for lost ones */
	uint16_t keepalive_s;       /* service thread: seconds, set each tick (keepalive.h) */
	uint64_t last_commit_seq;   /* service thread: newest commit seq delivered */
	struct histo ok_latency;    /* service thread: EVENT to OK, stored's answers */
	struct buf metrics_text;    /* service thread: stored's latest Prometheus text */
	struct buf stats_json;      /* service thread: stored's latest summary */
	char relay_url[CONFIG_TEXT_MAX]; /* cfg.relay_url, or the bind's (relayurl_of_bind()) */
	uint8_t auth_secret[32];    /* derives NIP-42 challenges (auth.h) */
	bool auth_writes, auth_reads; /* from cfg.auth_required */
	char nip11[16384];           /* the NIP-11 document, built once */
	size_t nip11_len;
	struct relayd_stats stats;
	atomic_bool stopping;       /* set by the signal thread, read by the service thread */
};


/* The current configuration snapshot (any thread). */
static inline const struct config *relayd_cfg(const struct relayd *r)
{
	return atomic_load_explicit(&r->cfg_now, memory_order_acquire);
}

#endif
