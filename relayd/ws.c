/* ws.c - libwebsockets context and callback router (see ws.h). */
#include "ws.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"
#include "auth.h"
#include "conn.h"
#include "evloop.h"
#include "ingress.h"
#include "iplimit.h"
#include "keepalive.h"
#include "listen.h"
#include "policy.h"
#include "realip.h"
#include "http.h"
#include "relayd.h"
#include "reply.h"
#include "send.h"
#include "service.h"
#include "wsext.h"
#include "wsframe.h"

/* lws's per-session storage: a websocket's conn id, or HTTP state. */
struct ws_session {
	uint64_t conn_id;
	struct wsext_neg neg; /* permessage-deflate, during the handshake */
	struct http_session http;
};

static void ws_notice(struct relayd *r, struct conn *c, const char *message)
{
	size_t n;
	char *text = reply_notice(message, &n);

	if (text)
		send_frame(r, c, text, n, NULL, '\0');
}

/* NIP-42: ["AUTH", challenge] for c. */
static void ws_send_challenge(struct relayd *r, struct conn *c)
{
	size_t n;
	char *frame = auth_challenge_frame(r, c->id, &n);

	if (frame)
		send_frame(r, c, frame, n, NULL, '\0');
}

/* With auth_challenge = connect the challenge goes out at once; else a lane
 * sends it when an answer first asks for AUTH (verb_auth_challenge()).
 * While relay_url is unset, the lane checks AUTH against the Host the
 * client dialled (auth.h), noted before any message of it can arrive. */
static void ws_prepare_auth(struct relayd *r, struct lws *wsi, struct conn *c)
{
	char host[AUTH_HOST_MAX];

	if (!relayd_cfg(r)->relay_url[0] && lws_hdr_copy(wsi, host, sizeof(host), WSI_TOKEN_HOST) > 0)
		ingress_note_host(r->ingress, c->id, host);
	/* Only a plugin reads it (stored/plugin.h): no memory spent otherwise. */
	if (relayd_cfg(r)->plugin[0])
		ingress_note_peer(r->ingress, c->id, c->ip);
	if (!strcmp(relayd_cfg(r)->auth_challenge, "connect"))
		ws_send_challenge(r, c);
}

static int ws_on_open(struct relayd *r, struct lws *wsi, struct ws_session *pss)
{
	char ip[64] = "";
	struct conn *c;
	bool counted;

	realip_conn_address(relayd_cfg(r), wsi, ip, sizeof(ip));
	if (policy_ip_blocked(r, ip)) {
		atomic_fetch_add(&r->stats.conns_refused, 1);
		return -1;
	}
	if (!iplimit_connect(r->iplimit, ip, deadline_now_ms(), &counted)) {
		atomic_fetch_add(&r->stats.conns_refused, 1);
		return -1;
	}
	c = conn_open(r->conns, wsi);
	if (!c) {
		iplimit_disconnect(r->iplimit, ip, counted);
		return -1;
	}
	memcpy(c->ip, ip, sizeof(c->ip));
	c->ip_counted = counted;
	c->opened_at = (int64_t)time(NULL);
	c->deflate = pss->neg.on;
	pss->conn_id = c->id;
	keepalive_heard(r, c);
	ws_prepare_auth(r, wsi, c);
	return 0;
}

/* Which bucket a message draws on, from its first bytes (no JSON parse):
 * `["EVENT"` or `["REQ"`/`["COUNT"`; anything else is not rate limited. */
static int ws_rate_kind(const char *data, size_t len)
{
	size_t i = 0;

	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
		i++;
	if (i < len && data[i] == '[')
		i++;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
		i++;
	if (len - i >= 7 && memcmp(data + i, "\"EVENT\"", 7) == 0)
		return IPLIMIT_EVENT;
	if ((len - i >= 5 && memcmp(data + i, "\"REQ\"", 5) == 0) ||
	    (len - i >= 7 && memcmp(data + i, "\"COUNT\"", 7) == 0))
		return IPLIMIT_REQ;
	return -1;
}

/* A whole message has arrived in c->rx: hand it to the connection's lane,
 * marked if its address is over its rate.  A client that keeps going past
 * the limit is disconnected. */
static int ws_on_message(struct relayd *r, struct conn *c)
{
	size_t len = c->rx.len;
	char *data = buf_take(&c->rx);
	int kind = ws_rate_kind(data, len);
	bool limited = kind >= 0 && !iplimit_take(r->iplimit, c->ip, (enum iplimit_kind)kind,
						  deadline_now_ms());
	bool pause;

	atomic_fetch_add(&r->stats.messages_in, 1);
	c->messages_in++;
	if (limited) {
		atomic_fetch_add(&r->stats.rate_limited, 1);
		if (iplimit_strikes(r->iplimit, c->ip) > relayd_cfg(r)->rate_limit_strikes) {
			log_info("closing %s: kept sending over its rate limit", c->ip);
			free(data);
			send_close(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "rate-limited: too many messages");
			return 0;
		}
	}
	/* A refused message has been answered by the ingress already. */
	if (ingress_submit(r->ingress, c->id, data, len, limited, &pause) == 0 && pause &&
	    !c->rx_paused) {
		/* TCP pushes back on a client that sends faster than its lane
		 * handles; others sharing the lane are not refused for it. */
		c->rx_paused = true;
		atomic_fetch_add(&r->stats.reads_paused, 1);
		lws_rx_flow_control(c->wsi, 0);
	}
	return 0;
}

/* RFC 6455 7.4.1: a message over max_message_bytes closes the connection
 * with 1009.  Returns -1, so that lws sends that Close frame and closes. */
static int ws_refuse_too_big(struct relayd *r, struct conn *c)
{
	char why[64];
	int n = snprintf(why, sizeof(why), "message too big (max %u bytes)",
			 relayd_cfg(r)->max_message_bytes);

	if (atomic_fetch_add(&r->stats.too_big_closed, 1) == 0)
		log_info("closing %s: its message is over max_message_bytes (later ones at debug)",
			 c->ip);
	else
		log_debug("closing %s: its message is over max_message_bytes", c->ip);
	conn_set_closing(c);
	lws_close_reason(c->wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)why,
			 (size_t)n);
	return -1;
}

/*
 * A message is measured by what its frames declare: the bytes of it
 * already in, this chunk, and the rest of the current frame
 * (lws_remaining_packet_payload()).  lws hands a frame's payload on as it
 * reads it, so a frame announcing too much is refused with its first bytes,
 * whatever the assembled message would have been.
 */
static int ws_on_receive(struct relayd *r, struct lws *wsi, struct ws_session *pss,
			 const void *in, size_t len)
{
	struct conn *c = conn_find(r->conns, pss->conn_id);

	if (!c)
		return -1;
	keepalive_heard(r, c);
	if (c->closing)
		return 0; /* what it sends now goes unanswered */
	if (wsframe_over(c->rx.len + len, lws_remaining_packet_payload(wsi),
			 relayd_cfg(r)->max_message_bytes))
		return ws_refuse_too_big(r, c);
	if (buf_append(&c->rx, in, len))
		return -1;
	if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
		return 0;
	if (lws_frame_is_binary(wsi)) {
		ws_notice(r, c, "invalid: binary messages are not supported; send JSON text");
		buf_reset(&c->rx);
		return 0;
	}
	return ws_on_message(r, c);
}

/* A pong, to the relay's keepalive ping or unasked (RFC 6455 5.5.3). */
static void ws_on_pong(struct relayd *r, struct ws_session *pss)
{
	struct conn *c = conn_find(r->conns, pss->conn_id);

	if (c)
		keepalive_heard(r, c);
}

static int ws_on_writable(struct relayd *r, struct ws_session *pss)
{
	struct conn *c = conn_find(r->conns, pss->conn_id);

	return c ? send_writable(r, c) : -1;
}

/* The client sent a Close: lws answers it with one, and nothing may
 * follow that. */
static void ws_on_peer_close(struct relayd *r, struct ws_session *pss)
{
	struct conn *c = conn_find(r->conns, pss->conn_id);

	if (c)
		conn_set_closing(c);
}

static void ws_on_close(struct relayd *r, struct ws_session *pss)
{
	struct conn *c = conn_find(r->conns, pss->conn_id);

	if (c)
		service_conn_gone(r, c);
	pss->conn_id = 0;
}

/* Every response names the worker, so operators and tests can tell which
 * process a client landed on. */
static int ws_on_add_headers(struct relayd *r, struct lws *wsi, struct ws_session *pss,
			     struct lws_process_html_args *a)
{
	char value[16];
	unsigned char *p;
	int n = snprintf(value, sizeof(value), "%d", r->instance);

	if (pss && wsext_answer(wsi, &pss->neg, a))
		return 1;
	p = (unsigned char *)a->p;
	if (lws_add_http_header_by_name(wsi, (const unsigned char *)"x-relay-worker:",
					(const unsigned char *)value, n, &p,
					(unsigned char *)a->p + a->max_len))
		return 1;
	a->max_len -= (int)(p - (unsigned char *)a->p);
	a->p = (char *)p;
	return 0;
}

/* Another thread called lws_cancel_service(): mail is waiting, or the
 * signal thread asks the service thread to end the event loop. */
static void ws_on_wake(struct relayd *r)
{
	service_drain(r);
	if (atomic_load(&r->stopping))
		evloop_stop(r->loop);
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		       size_t len)
{
	struct relayd *r = lws_context_user(lws_get_context(wsi));
	struct ws_session *pss = user;

	/* Connections that close before a request was parsed have no session
	 * (lws allocates it with the request): nothing of ours to do then. */
	if (!pss && reason != LWS_CALLBACK_EVENT_WAIT_CANCELLED && reason != LWS_CALLBACK_ADD_HEADERS)
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED: return ws_on_open(r, wsi, pss);
	case LWS_CALLBACK_RECEIVE: return ws_on_receive(r, wsi, pss, in, len);
	case LWS_CALLBACK_RECEIVE_PONG: ws_on_pong(r, pss); return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE: return ws_on_writable(r, pss);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: ws_on_peer_close(r, pss); return 0;
	case LWS_CALLBACK_CLOSED: ws_on_close(r, pss); return 0;
	case LWS_CALLBACK_HTTP: return http_on_request(r, wsi, &pss->http);
	case LWS_CALLBACK_HTTP_WRITEABLE: return http_on_writable(wsi, &pss->http);
	case LWS_CALLBACK_CLOSED_HTTP: http_on_close(r, &pss->http); return 0;
	case LWS_CALLBACK_HTTP_BODY: http_on_body(&pss->http, in, len); return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION: return http_on_body_done(r, wsi, &pss->http);
	case LWS_CALLBACK_ADD_HEADERS: return ws_on_add_headers(r, wsi, pss, in);
	case LWS_CALLBACK_CONFIRM_EXTENSION_OKAY: return wsext_confirm(r, wsi, &pss->neg, in);
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED: ws_on_wake(r); return 0;
	default: return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* The listening socket, watched by lws as a raw descriptor. */
static int ws_listen_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
			      void *in, size_t len)
{
	struct relayd *r = lws_context_user(lws_get_context(wsi));

	if (reason == LWS_CALLBACK_RAW_RX_FILE)
		return listen_on_ready(lws_get_vhost(wsi), r->listen_fd);
	return 0;
}

/* The permessage-deflate extension's callback (wsext.h): lws asks for
 * its option table when it activates it, and hands it each chunk of a
 * data frame's payload. */
static int ws_ext_callback(struct lws_context *ctx, const struct lws_extension *ext,
			   struct lws *wsi, enum lws_extension_callback_reasons reason, void *user,
			   void *in, size_t len)
{
	static const struct lws_ext_options no_options[] = { { NULL, EXTARG_NONE } };
	struct relayd *r = lws_context_user(ctx);
	struct ws_session *pss;

	switch (reason) {
	case LWS_EXT_CB_CONSTRUCT:
		*(const struct lws_ext_options **)in = no_options;
		return 0;
	case LWS_EXT_CB_PAYLOAD_RX:
		pss = lws_wsi_user(wsi);
		return wsext_on_rx(r, pss ? conn_find(r->conns, pss->conn_id) : NULL, wsi, in);
	default:
		return 0;
	}
}

static const struct lws_extension ws_extensions[] = {
	{ "permessage-deflate", ws_ext_callback, NULL },
	{ NULL, NULL, NULL }
};

static const struct lws_protocols ws_protocols[] = {
	{ "nostr", ws_callback, sizeof(struct ws_session), 65536, 0, NULL, 0 },
	{ LISTEN_PROTOCOL, ws_listen_callback, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

struct lws_context *ws_create(struct relayd *r)
{
	struct lws_context_creation_info info;
	struct lws_context *ctx;
	void *foreign_loops[1] = { evloop_native(r->loop) };

	r->listen_fd = listen_open(relayd_cfg(r)->bind, relayd_cfg(r)->port);
	if (r->listen_fd < 0) {
		log_warn("cannot listen on %s:%u", relayd_cfg(r)->bind, relayd_cfg(r)->port);
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.protocols = ws_protocols;
	info.extensions = ws_extensions;
	info.user = r;
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_LIBEV;
	info.foreign_loops = foreign_loops;
	info.timeout_secs = 30;
	ctx = lws_create_context(&info);
	if (!ctx)
		log_warnx("cannot start libwebsockets on %s:%u (its libev plugin comes with the Debian"
			  " package libwebsockets-evlib-ev)",
			  relayd_cfg(r)->bind, relayd_cfg(r)->port);
	return ctx;
}
