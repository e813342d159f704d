/* reply.c - per-worker reply channels (see reply.h). */
#include "reply.h"

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>
#include <stdatomic.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../common/peerlink.h"
#include "../proto/msg.h"
#include "stored.h"

/* Messages queued per worker before a sender waits: a commit of
 * commit_batch events answers them all at once. */
#define REPLY_QUEUE 8192
#define REPLY_WAIT_MS 2000

static int reply_dial(struct stored *s, uint16_t worker, uint64_t boot_id, nng_socket *out)
{
	char name[MSG_REPLY_SOCKET_NAME_MAX], url[256];
	nng_socket sock;

	msg_reply_socket_name(name, worker, boot_id);
	if (config_socket_url(&s->cfg, name, url, sizeof(url)) || nng_push0_open(&sock))
		return ERR_NNG;
	nng_socket_set_int(sock, NNG_OPT_SENDBUF, REPLY_QUEUE);
	nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, REPLY_WAIT_MS);
	nng_socket_set_ms(sock, NNG_OPT_RECONNMINT, 20);
	nng_socket_set_ms(sock, NNG_OPT_RECONNMAXT, 250);
	if (nng_dial(sock, url, NULL, NNG_FLAG_NONBLOCK)) {
		log_warnx("cannot dial %s", url);
		nng_close(sock);
		return ERR_NNG;
	}
	*out = sock;
	return 0;
}

/* A worker's newest reply pipe replaces the one before: after a cable was
 * pulled that one may be half open for minutes, and PUSH would keep
 * sending every other reply into it.  On nng's thread; one socket per
 * worker, so the channel's last pipe needs no lock. */
static void reply_pipe_added(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct reply_channel *ch = arg;
	nng_pipe old;

	(void)ev;
	old.id = (uint32_t)atomic_exchange(&ch->last_pipe, nng_pipe_id(pipe));
	if (old.id)
		nng_pipe_close(old);
}

/* The PUSH socket a remote worker's PULL dials: link_reply_url's port
 * plus the worker's id (common/peerlink.h). */
static int reply_listen(struct stored *s, uint16_t worker, nng_socket *out)
{
	struct peerlink_tls tls;
	char url[CONFIG_PATH_MAX + 8];
	nng_socket sock;

	if (peerlink_port_plus(s->cfg.link_reply_url, worker, url, sizeof(url)) ||
	    nng_push0_open(&sock))
		return ERR_NNG;
	nng_socket_set_int(sock, NNG_OPT_SENDBUF, REPLY_QUEUE);
	nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, REPLY_WAIT_MS);
	atomic_store(&s->replies[worker].last_pipe, 0);
	nng_pipe_notify(sock, NNG_PIPE_EV_ADD_POST, reply_pipe_added, &s->replies[worker]);
	config_link_tls(&s->cfg, &tls);
	if (peerlink_listen(sock, url, &tls, NULL)) {
		nng_close(sock);
		return ERR_NNG;
	}
	*out = sock;
	return 0;
}

/* Takes worker's channel out of the table and closes its socket. */
static void reply_close(struct stored *s, uint16_t worker)
{
	struct reply_channel *ch = &s->replies[worker];
	nng_socket old = NNG_SOCKET_INITIALIZER;

	pthread_mutex_lock(&s->workers_lock);
	if (ch->open)
		old = ch->sock;
	ch->open = false;
	pthread_mutex_unlock(&s->workers_lock);
	if (nng_socket_id(old) > 0)
		nng_close(old);
}

int reply_open(struct stored *s, uint16_t worker, uint64_t boot_id)
{
	struct reply_channel *ch = &s->replies[worker];
	nng_socket sock;
	bool same;

	pthread_mutex_lock(&s->workers_lock);
	same = ch->open && ch->boot_id == boot_id;
	pthread_mutex_unlock(&s->workers_lock);
	if (same)
		return 0; /* the same incarnation dialled stored again */
	/* The old socket goes first: a remote worker's port is the same for
	 * every incarnation. */
	reply_close(s, worker);
	if (s->cfg.link_reply_url[0] ? reply_listen(s, worker, &sock)
				     : reply_dial(s, worker, boot_id, &sock))
		return ERR_NNG;
	pthread_mutex_lock(&s->workers_lock);
	ch->sock = sock;
	ch->open = true;
	ch->stalled = false;
	ch->boot_id = boot_id;
	pthread_mutex_unlock(&s->workers_lock);
	return 0;
}

/* The channel for to, if its worker incarnation is the one that asked. */
static int reply_channel_for(struct stored *s, const struct rpc_return *to, nng_socket *sock,
			     bool *stalled)
{
	int rc = ERR_CLOSED;

	if (to->worker >= STORED_MAX_WORKERS)
		return ERR_CLOSED;
	pthread_mutex_lock(&s->workers_lock);
	if (s->replies[to->worker].open && s->workers[to->worker].present &&
	    s->workers[to->worker].pipe == to->pipe) {
		*sock = s->replies[to->worker].sock;
		*stalled = s->replies[to->worker].stalled;
		rc = 0;
	}
	pthread_mutex_unlock(&s->workers_lock);
	return rc;
}

static void reply_mark(struct stored *s, const struct rpc_return *to, nng_socket sock, bool stalled)
{
	struct reply_channel *ch = &s->replies[to->worker];
	bool changed = false;

	pthread_mutex_lock(&s->workers_lock);
	if (ch->open && nng_socket_id(ch->sock) == nng_socket_id(sock) && ch->stalled != stalled) {
		ch->stalled = stalled;
		changed = true;
	}
	pthread_mutex_unlock(&s->workers_lock);
	if (changed && stalled)
		log_warnx("worker %u does not read its replies; dropping them until it does",
			  to->worker);
	else if (changed)
		log_info("worker %u reads its replies again", to->worker);
}

static int reply_try_send(struct stored *s, const struct rpc_return *to, const void *payload,
			      size_t len)
{
	nng_socket sock;
	nng_msg *msg;
	bool stalled;
	int rv;

	if (reply_channel_for(s, to, &sock, &stalled))
		return ERR_CLOSED;
	if (nng_msg_alloc(&msg, 0))
		return ERR_NOMEM;
	if (nng_msg_append(msg, payload, len)) {
		nng_msg_free(msg);
		return ERR_NOMEM;
	}
	rv = nng_sendmsg(sock, msg, stalled ? NNG_FLAG_NONBLOCK : 0);
	if (rv) {
		nng_msg_free(msg);
		if (rv == NNG_ETIMEDOUT)
			reply_mark(s, to, sock, true);
		return rv == NNG_ETIMEDOUT || rv == NNG_EAGAIN ? ERR_FULL : ERR_NNG;
	}
	if (stalled)
		reply_mark(s, to, sock, false);
	return 0;
}

int reply_deliver(struct stored *s, uint16_t worker, const void *payload, size_t len)
{
	nng_socket sock = NNG_SOCKET_INITIALIZER;
	nng_msg *msg;

	if (worker >= STORED_MAX_WORKERS)
		return ERR_CLOSED;
	pthread_mutex_lock(&s->workers_lock);
	if (s->replies[worker].open)
		sock = s->replies[worker].sock;
	pthread_mutex_unlock(&s->workers_lock);
	if (nng_socket_id(sock) <= 0)
		return ERR_CLOSED;
	if (nng_msg_alloc(&msg, 0))
		return ERR_NOMEM;
	if (nng_msg_append(msg, payload, len)) {
		nng_msg_free(msg);
		return ERR_NOMEM;
	}
	if (nng_sendmsg(sock, msg, NNG_FLAG_NONBLOCK)) {
		nng_msg_free(msg);
		return ERR_FULL;
	}
	return 0;
}

int reply_send(struct stored *s, const struct rpc_return *to, const void *payload, size_t len)
{
	int rc = reply_try_send(s, to, payload, len);

	if (rc)
		atomic_fetch_add(&s->stats.replies_dropped, 1);
	return rc;
}

void reply_close_all(struct stored *s)
{
	for (int w = 0; w < STORED_MAX_WORKERS; w++) {
		if (s->replies[w].open)
			nng_close(s->replies[w].sock);
		s->replies[w].open = false;
	}
}

int reply_query_closed(struct stored *s, const struct rpc_return *to, uint64_t conn_id,
		       uint32_t serial, int64_t max_seq, const char *why)
{
	struct msg_header h = msg_header_for(to->worker, to->request_id);
	struct msg_query_done d = { conn_id, serial, MSG_QUERY_CLOSED, (uint64_t)max_seq,
				    { why, (uint32_t)strlen(why) } };
	struct buf out = BUF_INIT;
	int rc = msg_encode_query_done(&out, &h, &d);

	if (rc == 0)
		rc = reply_send(s, to, out.data, out.len);
	buf_free(&out);
	return rc;
}

int reply_count_closed(struct stored *s, const struct rpc_return *to, uint64_t conn_id,
		       const char *sub_id, uint32_t sub_id_len, const char *why)
{
	struct msg_header h = msg_header_for(to->worker, to->request_id);
	struct msg_count_result r = { .conn_id = conn_id, .sub_id = { sub_id, sub_id_len },
				      .status = MSG_QUERY_CLOSED,
				      .message = { why, (uint32_t)strlen(why) } };
	struct buf out = BUF_INIT;
	int rc = msg_encode_count_result(&out, &h, &r);

	if (rc == 0)
		rc = reply_send(s, to, out.data, out.len);
	buf_free(&out);
	return rc;
}
