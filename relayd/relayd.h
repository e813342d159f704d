/*
 * relayd.h - a worker process's context, shared by its modules.
 *
 * Threads of a worker:
 *   service  the libwebsockets loop (main thread).  It alone touches
 *            connections, their queues and their subscriptions (conn.c).
 *   ingress  verify_threads threads (ingress.c).  Each connection is bound to
 *            one of them (conn slot % n), so a client's messages keep their
 *            order.  They parse JSON, validate and verify events and filters,
 *            and send events to stored themselves.
 *   link     two receive threads for stored's replies and deliveries (link.c).
 * Everything bound for the service thread goes through the mailbox.
 * main.c owns the one struct relayd.
 */
#ifndef RELAYD_RELAYD_H
#define RELAYD_RELAYD_H

#include <libwebsockets.h>
#include <nng/nng.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/config.h"
#include "../common/heaptrim.h"
#include "../common/histo.h"
#include "backlog.h"
#include "gapcount.h"
#include "replay.h"
#include "policy.h"

struct mailbox;
struct conn_table;
struct ingress;
struct iplimit;

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
};

/* A NIP-86 request waiting for stored's answer (nip86.c). */
struct manage_pending {
	uint32_t request_id;
	struct lws *wsi;
	struct http_session *s; /* NULL: slot free */
	int64_t deadline_ms;
};

struct sig_verifier;
struct listencheck;
struct http_session;

struct relayd {
	/* The configuration is an immutable snapshot that a reload replaces;
	 * read it through relayd_cfg().  The snapshot before the current one is
	 * kept until the next reload, so a thread still reading it is safe. */
	_Atomic(const struct config *) cfg_now;
	const struct config *cfg_retired;
	const char *config_path;
	int instance;          /* the worker id, -i N */
	uint64_t boot_id;
	uint64_t started_at;
	struct evloop *loop;        /* the event loop lws runs on (evloop.h) */
	/* Connections given frames while the mailbox is drained, written once
	 * the drain is done (send.h); ids, since a connection may close. */
	bool draining;
	uint64_t *flush_ids;
	size_t nflush, flush_cap;
	struct lws_context *lws;
	int listen_fd;              /* our SO_REUSEPORT socket (listen.h) */
	bool accepting;             /* listen_fd is listening (after the first link up) */
	struct mailbox *mailbox;
	struct conn_table *conns;   /* service thread only */
	struct iplimit *iplimit;    /* service thread only */
	struct ingress *ingress;
	nng_socket rpc;             /* raw REQ to stored-rpc.ipc */
	nng_socket sub;             /* SUB to stored-pub.ipc */
	nng_socket reply;           /* PULL: stored's replies (proto/msg.h) */
	char reply_url[320];        /* where reply listens */
	nng_listener reply_listener; /* replaced by the listener check */
	struct listencheck *listencheck; /* keeps reply listening (link.c) */
	pthread_t link_threads[2];  /* receive threads of reply and sub */
	nng_dialer dialers[2];      /* of rpc and sub (link_watch renews them) */
	int64_t link_down_since_ms; /* service thread: 0 while the link is up */
	unsigned link_redials;      /* service thread: fresh dialers this outage */
	unsigned link_unopened;     /* service thread: watches that found the link up
				       and its backlog closed (link_watch_hello) */
	atomic_uint_fast32_t next_request_id;
	atomic_bool link_up;        /* a pipe to stored exists */
	bool answers_due;           /* service thread: between a LINK_UP and a
				       LINK_DOWN mail (histories are asked
				       again at each LINK_UP, so none is
				       overdue while the link is away) */
	atomic_uint_fast32_t delivers_waiting; /* MAIL_DELIVERs posted, not handled yet */
	atomic_bool link_closing;   /* link_close() began */
	struct backlog backlog;     /* requests nng had no room for; open once
				       this link's HELLO has been sent */
	lws_sorted_usec_list_t pump_tick; /* service thread: pumps the backlog */
	bool pump_armed;            /* service thread: pump_tick is scheduled */
	struct gapcount delivered;  /* service thread: DELIVER numbers, for lost ones */
	struct replay replay;       /* service thread: asking again for what was lost */
	uint64_t last_commit_seq;   /* service thread: newest commit seq delivered */
	struct histo ok_latency;    /* service thread: EVENT to OK, stored's answers */
	struct heaptrim heaptrim;   /* service thread: freed heap back to the system */
	struct buf metrics_text;    /* service thread: stored's latest Prometheus text */
	struct buf stats_json;      /* service thread: stored's latest summary */
	struct manage_pending manage[32]; /* service thread; 32 is NIP86_MAX_PENDING */
	struct sig_verifier *http_verifier; /* service thread: NIP-98 checks */
	struct policy_state policy; /* service thread: stored's NIP-86 policy */
	pthread_mutex_t link_lock;  /* guards the three fields below */
	int rpc_pipes, sub_pipes;   /* pipes to stored on each socket (an old one
				       may close after its successor opened) */
	bool link_announced;        /* MAIL_LINK_UP posted for the current pipes */
	uint32_t next_sub_serial;   /* service thread */
	lws_sorted_usec_list_t tick; /* the once-a-second timer */
	lws_sorted_usec_list_t link_tick; /* link_watch's, every LINK_WATCH_MS */
	char relay_url[CONFIG_TEXT_MAX]; /* cfg.relay_url, or ws://bind:port */
	uint8_t auth_secret[32];    /* derives NIP-42 challenges (auth.h) */
	bool auth_writes, auth_reads; /* from cfg.auth_required */
	char nip11[4096];           /* the NIP-11 document, built once */
	size_t nip11_len;
	struct relayd_stats stats;
	atomic_bool stopping;       /* set by the signal thread, read by the loop */
	atomic_bool stopped;        /* main finished its orderly shutdown */
	_Atomic(const char *) stop_phase; /* what main is doing while stopping */
};

/* The current configuration snapshot (any thread). */
static inline const struct config *relayd_cfg(const struct relayd *r)
{
	return atomic_load_explicit(&r->cfg_now, memory_order_acquire);
}

#endif
