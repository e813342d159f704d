/* link.c - the worker's sockets to stored (see link.h). */
#include "link.h"

#include <nng/nng.h>
#include <glob.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pubsub0/sub.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/slice.h"
#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/listencheck.h"
#include "../common/log.h"
#include "../common/peerlink.h"
#include "../common/rundir.h"
#include "../proto/msg.h"
#include "backlog.h"
#include "mailbox.h"
#include "relayd.h"

/* The link's own state.  Threads: the service thread, the two receive
 * threads, nng's pipe callbacks and any thread that sends. */
struct link {
	nng_socket rpc;             /* raw REQ to stored-rpc.ipc */
	nng_socket sub;             /* SUB to stored-pub.ipc */
	nng_socket reply;           /* PULL: stored's replies (proto/msg.h) */
	char reply_url[320];        /* where reply listens, or dials (remote) */
	nng_listener reply_listener; /* replaced by the listener check */
	struct listencheck *listencheck; /* keeps reply listening */
	pthread_t threads[2];       /* receive threads of reply and sub */
	nng_dialer dialers[3];      /* of rpc, sub and a remote reply (link_watch
				       renews them) */
	bool remote;                /* tcp:// or tls+tcp:// (common/peerlink.h) */
	bool remote_reply;          /* reply dials stored (link_reply_url) */
	atomic_int_fast64_t heard_ms; /* when stored last sent anything */
	int64_t hello_sent_ms;      /* service thread: this link's HELLO, 0: none */
	int64_t watched_ms;         /* service thread: the last link_watch() */
	unsigned unacked;           /* service thread: HELLOs unanswered in a row */
	atomic_bool hello_acked;    /* its HELLO_ACK arrived */
	int64_t down_since_ms;      /* service thread: 0 while the link is up */
	unsigned redials;           /* service thread: fresh dialers this outage */
	unsigned unopened;          /* service thread: watches that found the link
				       up and its backlog closed (link_watch_hello) */
	atomic_uint_fast32_t next_request_id;
	atomic_bool up;             /* a pipe to stored exists */
	atomic_uint_fast32_t delivers_waiting; /* MAIL_DELIVERs posted, not handled yet */
	atomic_bool closing;        /* link_close() began */
	struct backlog backlog;     /* requests nng had no room for; open once
				       this link's HELLO has been sent */
	pthread_mutex_t lock;       /* guards the three fields below */
	int rpc_pipes, sub_pipes;   /* pipes to stored on each socket (an old one
				       may close after its successor opened) */
	bool announced;             /* MAIL_LINK_UP posted for the current pipes */
};

uint32_t link_request_id(struct relayd *r)
{
	uint32_t id;

	do
		/* Bit 30 is left to replays (replay.h), bit 31 to nng. */
		id = (uint32_t)atomic_fetch_add(&r->link->next_request_id, 1) & 0x3fffffffu;
	while (id == 0);
	return id;
}

/* backlog_try_fn over the rpc socket: never blocks. */
static int link_try_send(void *arg, nng_msg *msg)
{
	struct relayd *r = arg;
	int rv = nng_sendmsg(r->link->rpc, msg, NNG_FLAG_NONBLOCK);

	if (rv == 0)
		return 0;
	return rv == NNG_EAGAIN ? ERR_FULL : ERR_NNG;
}

static int link_msg(uint32_t request_id, const void *data, size_t len, nng_msg **out)
{
	nng_msg *msg;

	if (nng_msg_alloc(&msg, 0))
		return ERR_NOMEM;
	if (nng_msg_header_append_u32(msg, 0x80000000u | request_id) ||
	    nng_msg_append(msg, data, len)) {
		nng_msg_free(msg);
		return ERR_NOMEM;
	}
	*out = msg;
	return 0;
}

/* The backlog just began to hold something: the service thread pumps it
 * (it alone runs the pump's timer). */
static void link_wake_pump(struct relayd *r)
{
	struct mail *m = mail_new(MAIL_PUMP, 0);

	if (m)
		mailbox_post(r->mailbox, m);
}

static int link_send_as(struct relayd *r, uint32_t request_id, const void *data, size_t len,
			bool control)
{
	nng_msg *msg;
	bool woke;
	int rc;

	/* After link_close() the backlog is gone (connections closing at
	 * shutdown still say so). */
	if (!atomic_load(&r->link->up) || atomic_load(&r->link->closing))
		return ERR_CLOSED;
	if ((rc = link_msg(request_id, data, len, &msg)))
		return rc;
	rc = backlog_send(&r->link->backlog, msg, control, relayd_cfg(r)->request_backlog, &woke);
	if (woke)
		link_wake_pump(r);
	return rc;
}

int link_send(struct relayd *r, uint32_t request_id, const void *data, size_t len)
{
	return link_send_as(r, request_id, data, len, false);
}

int link_send_control(struct relayd *r, uint32_t request_id, const void *data, size_t len)
{
	return link_send_as(r, request_id, data, len, true);
}

bool link_pump(struct relayd *r)
{
	return backlog_pump(&r->link->backlog);
}

int link_send_hello(struct relayd *r, uint32_t request_id, const void *data, size_t len)
{
	nng_msg *msg;
	bool woke;
	int rc;

	if (!atomic_load(&r->link->up))
		return ERR_CLOSED;
	if ((rc = link_msg(request_id, data, len, &msg)))
		return rc;
	r->link->hello_sent_ms = deadline_now_ms();
	atomic_store(&r->link->hello_acked, false);
	rc = backlog_open(&r->link->backlog, msg, &woke);
	if (woke)
		link_wake_pump(r);
	return rc;
}

/* The largest receive buffer nng 1.5 accepts. */
#define LINK_NNG_RECVBUF_MAX 8192

/* How long the delivery thread sleeps while the service thread has
 * deliver_queue deliveries still to handle. */
#define LINK_DELIVER_WAIT_US 1000

/* The service thread has deliver_queue deliveries waiting in the mailbox:
 * stop taking more from nng until it has handled half of them, so that a
 * service thread slower than stored for long does not grow this worker
 * without bound.  nng's own buffer then fills and drops the rest, which
 * the worker counts and asks for again (relayd/replay.h).  Waiting for half, not
 * for one, makes the losses a few long stretches rather than a gap every
 * few deliveries (a subscription keeps 64 ranges of lost deliveries, and
 * each gap starts a round of replays).  Returns false when the link
 * closes. */
static bool link_wait_for_loop(struct relayd *r)
{
	uint32_t bound = relayd_cfg(r)->deliver_queue;

	if (atomic_load(&r->link->delivers_waiting) < bound)
		return true;
	while (atomic_load(&r->link->delivers_waiting) > bound / 2) {
		if (atomic_load(&r->link->closing))
			return false;
		usleep(LINK_DELIVER_WAIT_US);
	}
	return true;
}

/* What a message received as kind is: a remote worker's deliveries come
 * on its reply channel (stored/pub.h). */
static enum mail_kind link_kind(nng_msg *msg, enum mail_kind kind)
{
	const uint8_t *data = nng_msg_body(msg);

	if (kind == MAIL_RPC && nng_msg_len(msg) >= 2 && data[1] == MSG_DELIVER)
		return MAIL_DELIVER;
	return kind;
}

/* A DELIVER that came on the reply channel while the service thread has
 * deliver_queue of them waiting is dropped, not waited for: the replies
 * behind it must not wait.  The worker counts the gap and asks for what it
 * lost, as after nng's own drops on the SUB socket. */
static bool link_drop_delivery(struct relayd *r, enum mail_kind kind, enum mail_kind as)
{
	return kind != as &&
	       atomic_load(&r->link->delivers_waiting) >= relayd_cfg(r)->deliver_queue;
}

static void link_receive(struct relayd *r, nng_socket sock, enum mail_kind as)
{
	enum mail_kind kind;
	nng_msg *msg;
	struct mail *m;

	/* A remote worker's sub socket carries no DELIVER (stored/pub.h), so
	 * it never waits: its METRICS are what tells a live link. */
	bool waits = as == MAIL_DELIVER && !r->link->remote_reply;

	while ((!waits || link_wait_for_loop(r)) && nng_recvmsg(sock, &msg, 0) == 0) {
		atomic_store(&r->link->heard_ms, deadline_now_ms());
		kind = link_kind(msg, as);
		if (link_drop_delivery(r, kind, as)) {
			nng_msg_free(msg);
			continue;
		}
		m = mail_new(kind, 0);
		if (!m) {
			nng_msg_free(msg);
			continue;
		}
		if (kind == MAIL_DELIVER)
			atomic_fetch_add(&r->link->delivers_waiting, 1);
		nng_msg_header_clear(msg);
		m->msg = msg;
		mailbox_post(r->mailbox, m);
	}
}

static void *link_reply_main(void *arg)
{
	struct relayd *r = arg;

	pthread_setname_np(pthread_self(), "link-reply"); /* for top -H, perf */
	slice_set_this_thread(relayd_cfg(r)->request_slice_us);
	link_receive(r, r->link->reply, MAIL_RPC);
	return NULL;
}

static void *link_sub_main(void *arg)
{
	struct relayd *r = arg;

	pthread_setname_np(pthread_self(), "link-sub"); /* for top -H, perf */
	slice_set_this_thread(relayd_cfg(r)->request_slice_us);
	link_receive(r, r->link->sub, MAIL_DELIVER);
	return NULL;
}

/*
 * The link counts as up once both sockets have a pipe: subscriptions are
 * registered again only then, so no delivery for them can be published
 * before this worker's SUB pipe is there to take it.  Sending requests needs
 * only the rpc pipe.  Pipe callbacks run on nng's threads, hence the lock.
 */
static void link_pipe_event(struct relayd *r, int *pipes, nng_pipe_ev ev)
{
	enum mail_kind kind = MAIL_TEXT; /* none */
	struct mail *m;
	bool both;

	pthread_mutex_lock(&r->link->lock);
	*pipes += ev == NNG_PIPE_EV_ADD_POST ? 1 : -1;
	if (ev == NNG_PIPE_EV_ADD_POST) /* the silence of a new link counts from now */
		atomic_store(&r->link->heard_ms, deadline_now_ms());
	both = r->link->rpc_pipes > 0 && r->link->sub_pipes > 0;
	atomic_store(&r->link->up, r->link->rpc_pipes > 0);
	if (!both) /* the next HELLO opens it; what waits was for this link */
		backlog_close(&r->link->backlog);
	if (both && !r->link->announced) {
		r->link->announced = true;
		kind = MAIL_LINK_UP;
	} else if (!both && r->link->announced) {
		r->link->announced = false;
		kind = MAIL_LINK_DOWN;
	}
	pthread_mutex_unlock(&r->link->lock);
	if (kind != MAIL_TEXT && (m = mail_new(kind, 0)))
		mailbox_post(r->mailbox, m);
}

static void link_rpc_pipe_event(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct relayd *r = arg;

	link_pipe_event(r, &r->link->rpc_pipes, ev);
}

static void link_sub_pipe_event(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct relayd *r = arg;

	link_pipe_event(r, &r->link->sub_pipes, ev);
}

/* Dials url with the [link] TLS files, in the background: nng keeps
 * redialling if stored is not up yet. */
static int link_dial_url(nng_socket sock, const struct config *cfg, const char *url,
			 nng_dialer *dialer)
{
	struct peerlink_tls tls;

	/* While stored restarts, a dial every 100 ms at most: the worker is
	 * back sooner, for a refused connect() ten times a second
	 * (bench/RESULTS.md, item 38). */
	nng_socket_set_ms(sock, NNG_OPT_RECONNMINT, 50);
	nng_socket_set_ms(sock, NNG_OPT_RECONNMAXT, 100);
	config_link_tls(cfg, &tls);
	return peerlink_dial(sock, url, &tls, dialer);
}

static int link_dial(nng_socket sock, const struct config *cfg, enum config_link channel,
		     nng_dialer *dialer)
{
	char url[CONFIG_PATH_MAX + 64];

	if (config_link_url(cfg, channel, url, sizeof(url)))
		return ERR_TOOBIG;
	return link_dial_url(sock, cfg, url, dialer);
}

/* A remote worker's reply channel: it dials link_reply_url's port plus its
 * own id, where stored's PUSH for it listens (stored/reply.h). */
static int link_dial_reply(struct relayd *r)
{
	return link_dial_url(r->link->reply, relayd_cfg(r), r->link->reply_url,
			     &r->link->dialers[2]);
}

/* Fresh dialers on every socket that dials (service thread). */
static void link_redial(struct relayd *r)
{
	int n = r->link->remote_reply ? 3 : 2;

	for (int i = 0; i < n; i++)
		nng_dialer_close(r->link->dialers[i]);
	link_dial(r->link->rpc, relayd_cfg(r), CONFIG_LINK_RPC, &r->link->dialers[0]);
	link_dial(r->link->sub, relayd_cfg(r), CONFIG_LINK_PUB, &r->link->dialers[1]);
	if (r->link->remote_reply)
		link_dial_reply(r);
}

/*
 * A link down longer than LINK_REDIAL_MS gets fresh dialers, and again
 * every LINK_REDIAL_MS while stored stays away (logged once per outage at
 * warn).  Service thread.  nng redials by itself, but a dialer can stay
 * silent after stored restarted (bench/RESULTS.md, item 38).  A healthy
 * dialer retries every 100 ms at most, so this only renews dialers that
 * had their chance.
 */
#define LINK_REDIAL_MS 750

/* A link up whose backlog stays closed had its HELLO refused by nng for
 * good (no memory): nothing can be asked until one goes, so after two
 * watches in a row (a LINK_UP still in the mailbox is handled well within
 * one) the link is announced again, which sends a HELLO and registers the
 * subscriptions again. */
static void link_watch_hello(struct relayd *r)
{
	struct mail *m;

	if (backlog_is_open(&r->link->backlog)) {
		r->link->unopened = 0;
		return;
	}
	if (++r->link->unopened < 2)
		return;
	r->link->unopened = 0;
	log_warnx("the link to stored is up but its HELLO did not go; sending it again");
	if ((m = mail_new(MAIL_LINK_UP, 0)))
		mailbox_post(r->mailbox, m);
}

/* How long a HELLO may wait for its HELLO_ACK before the worker says that
 * stored does not take it (another protocol version, most likely). */
#define LINK_HELLO_ACK_MS 5000

/* A remote worker whose HELLO went unanswered dials again, so that stored
 * tries its reply channel again (a listen on its port can fail while
 * another socket holds the port): the new link sends a new HELLO. */
static void link_watch_ack(struct relayd *r, int64_t now_ms)
{
	if (atomic_load(&r->link->hello_acked)) {
		r->link->unacked = 0;
		return;
	}
	if (!r->link->hello_sent_ms || now_ms - r->link->hello_sent_ms < LINK_HELLO_ACK_MS)
		return;
	if (r->link->unacked++ == 0)
		log_warnx("stored has not answered this worker's HELLO in %d ms: a stored of another"
			  " protocol version (this worker speaks %u) drops it, and says so in its"
			  " log%s", LINK_HELLO_ACK_MS, msg_version(),
			  r->link->remote ? "; dialing again" : "");
	else
		log_debug("HELLO unanswered again (%u)", r->link->unacked);
	r->link->hello_sent_ms = 0; /* once per link */
	if (r->link->remote)
		link_redial(r);
}

/*
 * A tcp link can break without either end hearing of it (a cable pulled,
 * a host gone): stored publishes METRICS every second, so a link silent
 * for link_timeout_ms is closed here, which fails what waits on it at once
 * (MAIL_LINK_DOWN) and dials again.  An ipc link closes by itself.
 */
static bool link_watch_silence(struct relayd *r, int64_t now_ms, int64_t unwatched)
{
	int64_t silent = now_ms - atomic_load(&r->link->heard_ms);
	int64_t limit = relayd_cfg(r)->link_timeout_ms;

	if (!r->link->remote || limit == 0)
		return false;
	/* This worker itself did not run for a while (stopped, or starved on
	 * a busy machine): its receive threads did not either, so the silence
	 * says nothing of the link.  It gets a fresh window. */
	if (unwatched > limit / 2) {
		atomic_store(&r->link->heard_ms, now_ms);
		return false;
	}
	if (silent < limit)
		return false;
	log_warnx("stored sent nothing for %lld ms; closing the link and dialing again",
		  (long long)silent);
	atomic_store(&r->link->heard_ms, now_ms);
	link_redial(r);
	return true;
}

void link_watch(struct relayd *r, int64_t now_ms)
{
	int64_t unwatched = now_ms - r->link->watched_ms;
	bool up;

	r->link->watched_ms = now_ms;
	pthread_mutex_lock(&r->link->lock);
	up = r->link->announced;
	pthread_mutex_unlock(&r->link->lock);
	if (up && link_watch_silence(r, now_ms, unwatched))
		return;
	if (up) {
		r->link->down_since_ms = 0;
		r->link->redials = 0;
		link_watch_hello(r);
		link_watch_ack(r, now_ms);
		return;
	}
	if (r->link->down_since_ms == 0) {
		r->link->down_since_ms = now_ms;
		return;
	}
	if (now_ms - r->link->down_since_ms < LINK_REDIAL_MS)
		return;
	if (r->link->redials++ == 0)
		log_warnx("stored unreachable for %lld ms%s; dialing again (every %d ms until it"
			  " answers)",
			  (long long)(now_ms - r->link->down_since_ms),
			  peerlink_is_tls(relayd_cfg(r)->link_rpc_url)
				  ? " (or it refused this worker's certificate)"
				  : "",
			  LINK_REDIAL_MS);
	else
		log_debug("stored still unreachable; dialing again (%u)", r->link->redials);
	link_redial(r);
	r->link->down_since_ms = now_ms;
}

/* Removes reply sockets left by earlier incarnations of this worker that
 * did not exit cleanly (their names differ by boot id). */
static void link_remove_stale(const struct relayd *r)
{
	char pattern[CONFIG_PATH_MAX + 64];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/relayd-%d-*.ipc", relayd_cfg(r)->run_dir,
		 r->instance);
	if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0)
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
	globfree(&g);
}

static int link_listen_reply_url(struct relayd *r)
{
	return rundir_listen(r->link->reply, r->link->reply_url, RUNDIR_WORKERS, relayd_cfg(r),
			     &r->link->reply_listener);
}

/* The PULL socket stored's replies arrive on, listening before the first
 * HELLO names it. */
static int link_listen_replies(struct relayd *r, size_t max)
{
	char name[MSG_REPLY_SOCKET_NAME_MAX];
	const char *base = relayd_cfg(r)->link_reply_url;

	msg_reply_socket_name(name, (uint16_t)r->instance, r->boot_id);
	r->link->remote_reply = base[0] != '\0';
	if ((r->link->remote_reply
		     ? peerlink_port_plus(base, (unsigned)r->instance, r->link->reply_url,
					  sizeof(r->link->reply_url))
		     : config_socket_url(relayd_cfg(r), name, r->link->reply_url,
					 sizeof(r->link->reply_url))) ||
	    nng_pull0_open(&r->link->reply))
		return ERR_NNG;
	nng_socket_set_size(r->link->reply, NNG_OPT_RECVMAXSZ, max);
	nng_socket_set_int(r->link->reply, NNG_OPT_RECVBUF, 1024);
	if (r->link->remote_reply)
		return link_dial_reply(r);
	link_remove_stale(r);
	return link_listen_reply_url(r);
}

/* On the listener check's thread (common/listencheck.h): nng 1.5.2 can
 * stop the reply listener for good, and then every stored that dials it
 * after sends its replies into nothing. */
static int link_relisten_replies(void *arg)
{
	struct relayd *r = arg;

	nng_listener_close(r->link->reply_listener);
	return link_listen_reply_url(r);
}

int link_open(struct relayd *r)
{
	uint8_t topic[MSG_TOPIC_LEN], metrics_topic[MSG_TOPIC_LEN], policy_topic[MSG_TOPIC_LEN];
	size_t max = (size_t)relayd_cfg(r)->max_message_bytes * 2 + 1048576;

	r->link = calloc(1, sizeof(*r->link));
	if (!r->link)
		return ERR_NOMEM;
	if (link_listen_replies(r, max) || nng_req0_open_raw(&r->link->rpc) ||
	    nng_sub0_open(&r->link->sub))
		return ERR_NNG;
	nng_socket_set_size(r->link->rpc, NNG_OPT_RECVMAXSZ, max);
	nng_socket_set_size(r->link->sub, NNG_OPT_RECVMAXSZ, max);
	/* nng refuses a receive buffer over 8192 messages (and then keeps its
	 * default of 128); deliver_queue beyond it still bounds the service
	 * thread's share (link_wait_for_loop). */
	nng_socket_set_int(r->link->sub, NNG_OPT_RECVBUF,
			   (int)(relayd_cfg(r)->deliver_queue < LINK_NNG_RECVBUF_MAX
					 ? relayd_cfg(r)->deliver_queue
					 : LINK_NNG_RECVBUF_MAX));
	nng_socket_set_int(r->link->rpc, NNG_OPT_SENDBUF, 1024);
	msg_topic(topic, MSG_DELIVER, (uint16_t)r->instance);
	msg_topic(metrics_topic, MSG_METRICS, MSG_WORKER_ALL);
	msg_topic(policy_topic, MSG_POLICY, MSG_WORKER_ALL);
	nng_socket_set(r->link->sub, NNG_OPT_SUB_SUBSCRIBE, topic, sizeof(topic));
	nng_socket_set(r->link->sub, NNG_OPT_SUB_SUBSCRIBE, metrics_topic, sizeof(metrics_topic));
	nng_socket_set(r->link->sub, NNG_OPT_SUB_SUBSCRIBE, policy_topic, sizeof(policy_topic));
	pthread_mutex_init(&r->link->lock, NULL);
	backlog_init(&r->link->backlog, link_try_send, r);
	nng_pipe_notify(r->link->rpc, NNG_PIPE_EV_ADD_POST, link_rpc_pipe_event, r);
	nng_pipe_notify(r->link->rpc, NNG_PIPE_EV_REM_POST, link_rpc_pipe_event, r);
	nng_pipe_notify(r->link->sub, NNG_PIPE_EV_ADD_POST, link_sub_pipe_event, r);
	nng_pipe_notify(r->link->sub, NNG_PIPE_EV_REM_POST, link_sub_pipe_event, r);
	r->link->remote = !peerlink_is_ipc(r->link->reply_url) ||
			  (relayd_cfg(r)->link_rpc_url[0] && !peerlink_is_ipc(relayd_cfg(r)->link_rpc_url));
	if (link_dial(r->link->rpc, relayd_cfg(r), CONFIG_LINK_RPC, &r->link->dialers[0]) ||
	    link_dial(r->link->sub, relayd_cfg(r), CONFIG_LINK_PUB, &r->link->dialers[1]))
		return ERR_NNG;
	if (pthread_create(&r->link->threads[0], NULL, link_reply_main, r) ||
	    pthread_create(&r->link->threads[1], NULL, link_sub_main, r))
		return ERR_NNG;
	r->link->listencheck = listencheck_new(relayd_cfg(r)->listen_check_ms,
					      relayd_cfg(r)->listen_check_timeout_ms);
	if (!r->link->listencheck ||
	    (!r->link->remote_reply &&
	     listencheck_add(r->link->listencheck, r->link->reply, r->link->reply_url,
			     LISTENCHECK_AS_PUSH, link_relisten_replies, r, "the reply socket")) ||
	    listencheck_start(r->link->listencheck))
		return ERR_NOMEM;
	return 0;
}

void link_close(struct relayd *r)
{
	atomic_store(&r->link->closing, true); /* link_wait_for_loop() gives up */
	listencheck_stop(r->link->listencheck);
	nng_close(r->link->rpc);
	nng_close(r->link->sub);
	nng_close(r->link->reply);
	pthread_join(r->link->threads[0], NULL);
	pthread_join(r->link->threads[1], NULL);
	backlog_destroy(&r->link->backlog); /* the lanes stopped before */
	listencheck_free(r->link->listencheck); /* its socket is closed */
	r->link->listencheck = NULL;
	if (!r->link->remote_reply)
		unlink(r->link->reply_url + strlen("ipc://"));
}

void link_free(struct relayd *r)
{
	free(r->link);
	r->link = NULL;
}

void link_hello_acked(struct relayd *r)
{
	atomic_store(&r->link->hello_acked, true);
}

void link_deliver_taken(struct relayd *r)
{
	atomic_fetch_sub(&r->link->delivers_waiting, 1);
}

uint64_t link_relistens(const struct relayd *r)
{
	return listencheck_relistens(r->link->listencheck);
}
