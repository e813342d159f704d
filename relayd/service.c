/* service.c - the service thread's mail handlers and timers (see service.h). */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/deadline.h"
#include "../common/heaptrim.h"
#include "../common/log.h"
#include "../common/notify.h"
#include "../common/procstat.h"
#include "../proto/msg.h"
#include "answer.h"
#include "conn.h"
#include "ingress.h"
#include "iplimit.h"
#include "keepalive.h"
#include "link.h"
#include "listen.h"
#include "mailbox.h"
#include "nip86.h"
#include "relayd.h"
#include "reload.h"
#include "replay.h"
#include "reply.h"
#include "send.h"
#include "subreg.h"
#include "wsguard.h"

/* The service thread's own state; no other thread touches it. */
struct service {
	struct relayd *r;
	bool accepting;             /* listen_fd is listening (after the first link up) */
	bool answers_due;           /* between a LINK_UP and a LINK_DOWN mail
				       (histories are asked again at each LINK_UP,
				       so none is overdue while the link is away) */
	lws_sorted_usec_list_t pump_tick; /* pumps the backlog */
	bool pump_armed;            /* pump_tick is scheduled */
	struct heaptrim heaptrim;   /* freed heap back to the system */
	uint32_t next_sub_serial;   /* the counter of conn_sub_next_serial() */
};

struct service *service_new(struct relayd *r)
{
	struct service *sv = calloc(1, sizeof(*sv));

	if (sv)
		sv->r = r;
	keepalive_tick(r); /* connections may open before the first tick */
	return sv;
}

void service_free(struct service *sv)
{
	free(sv);
}

/* Sends one encoded request and frees it; returns link_send's result. */
static int service_request(struct relayd *r, struct buf *out, uint32_t request_id)
{
	int rc = link_send(r, request_id, out->data, out->len);

	buf_free(out);
	return rc;
}

/* The same for what the worker owes stored itself (link_send_control). */
static int service_control(struct relayd *r, struct buf *out, uint32_t request_id)
{
	int rc = link_send_control(r, request_id, out->data, out->len);

	buf_free(out);
	return rc;
}

static void service_closed(struct relayd *r, struct conn *c, const char *sub, size_t len,
			   const char *why)
{
	size_t n;
	char *text = reply_closed(sub, len, why, &n);

	if (text)
		send_frame(r, c, text, n, NULL, '\0');
}

static void service_ok(struct relayd *r, struct conn *c, const uint8_t id[32], const char *why)
{
	size_t n;
	char *text = reply_ok(id, false, why, &n);

	if (text)
		send_frame(r, c, text, n, NULL, '\0');
}

static void mail_text(struct relayd *r, struct conn *c, struct mail *m)
{
	send_frame(r, c, m->text, m->text_len, NULL, '\0');
	m->text = NULL;
}

static void mail_sub_open(struct relayd *r, struct conn *c, struct mail *m)
{
	struct sub *old = conn_sub_find(c, m->sub_id, m->sub_id_len);
	struct sub *s;
	bool replaced;
	char why[96];

	if (!old && c->nsubs >= relayd_cfg(r)->max_subscriptions) {
		snprintf(why, sizeof(why), "blocked: too many open subscriptions (max %u)",
			 relayd_cfg(r)->max_subscriptions);
		service_closed(r, c, m->sub_id, m->sub_id_len, why);
		return;
	}
	replaced = old != NULL;
	if (old)
		conn_sub_remove(c, old); /* stored replaces it by name */
	s = conn_sub_add(c, m->sub_id, m->sub_id_len,
			 conn_sub_next_serial(c, &r->service->next_sub_serial), m->filters,
			 m->nfilters);
	m->filters = NULL;
	m->nfilters = 0;
	if (s) {
		s->restricted = m->restricted;
		s->nviewers = m->nviewers;
		memcpy(s->viewers, m->viewers, sizeof(s->viewers));
	}
	if (!s) {
		service_closed(r, c, m->sub_id, m->sub_id_len, "error: out of memory");
		return;
	}
	if (subreg_open(r, c, s, 0, false)) {
		service_closed(r, c, m->sub_id, m->sub_id_len,
			       "error: storage is unavailable, retry shortly");
		/* The subscription this REQ replaced is still filed at stored
		 * if the link is up (the backlog was full): unfile it. */
		if (replaced)
			subreg_close(r, c, s);
		conn_sub_remove(c, s);
	}
}

static void mail_sub_close(struct relayd *r, struct conn *c, struct mail *m)
{
	struct sub *s = conn_sub_find(c, m->sub_id, m->sub_id_len);

	if (!s)
		return;
	subreg_close(r, c, s);
	conn_sub_remove(c, s);
}

/* NIP-42 AUTH added a pubkey: subscriptions that may reach private kinds
 * show its events from now on (their history was chosen without it).  A
 * later SUB_OPEN of the connection already carries it (auth_list). */
static void mail_authed(struct relayd *r, struct conn *c, struct mail *m)
{
	(void)r;
	for (uint32_t i = 0; i < c->nsubs; i++) {
		struct sub *s = c->subs[i];
		bool known = false;

		if (!s->restricted)
			continue;
		for (uint32_t j = 0; j < s->nviewers && !known; j++)
			known = memcmp(s->viewers[j], m->viewers[0], 32) == 0;
		if (!known && s->nviewers < sizeof(s->viewers) / sizeof(s->viewers[0]))
			memcpy(s->viewers[s->nviewers++], m->viewers[0], 32);
	}
}

static void mail_resume(struct relayd *r, struct conn *c, struct mail *m)
{
	(void)r;
	(void)m;
	if (!c->rx_paused)
		return;
	c->rx_paused = false;
	lws_rx_flow_control(c->wsi, 1);
}

static void mail_event_pending(struct relayd *r, struct conn *c, struct mail *m)
{
	int64_t deadline = deadline_now_ms() + relayd_cfg(r)->store_timeout_ms;

	if (conn_pending_add(c, m->request_id, m->event_id, deadline))
		service_ok(r, c, m->event_id, "error: out of memory");
	else
		c->pending[c->npending - 1].started_us = deadline_now_us();
}

static void mail_event_failed(struct relayd *r, struct conn *c, struct mail *m)
{
	struct pending_event p;

	if (conn_pending_take(c, m->request_id, &p) == 0)
		service_ok(r, c, p.id, "error: storage is unavailable, retry shortly");
}

static void mail_count_pending(struct relayd *r, struct conn *c, struct mail *m)
{
	int64_t deadline = deadline_now_ms() + relayd_cfg(r)->answer_timeout_ms;

	if (count_waits_add(&c->counts, m->request_id, m->sub_id, m->sub_id_len, deadline))
		service_closed(r, c, m->sub_id, m->sub_id_len, "error: out of memory");
}

/* Finds the query id to close with the noted COUNT itself; one the link's
 * loss closed already is not closed twice. */
static void mail_count_failed(struct relayd *r, struct conn *c, struct mail *m)
{
	struct count_wait w;

	if (count_waits_take(&c->counts, m->request_id, &w)) {
		service_closed(r, c, w.sub_id, w.sub_id_len,
			       "error: storage is unavailable, retry shortly");
		free(w.sub_id);
	}
}

static void service_hello(struct relayd *r)
{
	uint32_t request_id = link_request_id(r);
	struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
	struct msg_hello m = { (uint32_t)getpid(), r->boot_id };
	struct buf out = BUF_INIT;

	/* stored numbers this worker's deliveries from 1 again once it takes
	 * this HELLO, stamped with its request id. */
	gapcount_restart(&r->delivered, request_id);
	if (msg_encode_hello(&out, &h, &m) == 0)
		link_send_hello(r, request_id, out.data, out.len);
	buf_free(&out);
}

/*
 * Registers a connection's subscriptions again after stored came back.  One
 * still waiting for its history asks for it again; a live one asks for the
 * events committed after the later of the point it was registered at and
 * the newest commit this worker has delivered.  Commit seqs persist in the
 * database, so nothing committed while it was unregistered is missed.
 */
static void service_restore_conn(struct conn *c, void *arg)
{
	struct relayd *r = arg;

	for (uint32_t i = 0; i < c->nsubs; i++) {
		struct sub *s = c->subs[i];
		uint64_t after = s->floor_seq > r->last_commit_seq ? s->floor_seq : r->last_commit_seq;

		if (s->state != SUB_QUERYING)
			s->state = SUB_RESUMING;
		subreg_open(r, c, s, after, true);
	}
}

/* A COUNT c waits for, closed with why (count_waits_drain/_expire). */
struct count_closing {
	struct relayd *r;
	struct conn *c;
	const char *why;
};

static void service_close_count(void *arg, const char *sub_id, size_t len)
{
	struct count_closing *cc = arg;

	service_closed(cc->r, cc->c, sub_id, len, cc->why);
}

/* What c waits for from stored will not come: its pending EVENTs' OKs and
 * its COUNTs' answers died with stored (countwait.h). */
static void service_fail_waiting(struct conn *c, void *arg)
{
	struct relayd *r = arg;
	struct count_closing cc = { r, c, "error: storage restarted before answering, retry" };

	for (uint32_t i = 0; i < c->npending; i++)
		service_ok(r, c, c->pending[i].id, "error: storage restarted before answering, retry");
	c->npending = 0;
	count_waits_drain(&c->counts, service_close_count, &cc);
}

static void mail_link_down(struct relayd *r)
{
	log_warnx("lost the connection to stored; waiting for it to return");
	r->service->answers_due = false;
	conn_foreach(r->conns, service_fail_waiting, r);
}

/* Called when stored first answers: only then does the kernel hand this
 * worker connections, so no client meets a worker that cannot store. */
static int service_accept(struct relayd *r)
{
	if (r->service->accepting)
		return 0;
	if (listen_adopt(lws_get_vhost_by_name(r->lws, "default"), r->listen_fd, LISTEN_PROTOCOL)) {
		log_warn("cannot listen on %s:%u", relayd_cfg(r)->bind, relayd_cfg(r)->port);
		return -1;
	}
	r->service->accepting = true;
	log_info("accepting connections on %s:%u", relayd_cfg(r)->bind, relayd_cfg(r)->port);
	return 0;
}

static void mail_link_up(struct relayd *r)
{
	log_info("connected to stored; registering %u subscriptions", conn_sub_total(r->conns));
	/* Ready for systemd once the port is bound (before the event loop ran) and
	 * stored answers; repeated READY=1 after a reconnect is harmless. */
	if (service_accept(r))
		fatalx("cannot accept connections");
	notify_send("READY=1\nSTATUS=serving");
	/* Whatever was asked on an earlier link is answered now: a request
	 * sent after the previous link went down but before this HELLO
	 * (a LINK_UP handled after its pipe had gone) was dropped with the
	 * backlog. */
	conn_foreach(r->conns, service_fail_waiting, r);
	r->service->answers_due = true;
	service_hello(r);
	replay_reset(r);
	conn_foreach(r->conns, service_restore_conn, r);
}

typedef void (*conn_mail_fn)(struct relayd *r, struct conn *c, struct mail *m);

static const conn_mail_fn conn_mail_handlers[] = {
	[MAIL_TEXT] = mail_text,
	[MAIL_SUB_OPEN] = mail_sub_open,
	[MAIL_SUB_CLOSE] = mail_sub_close,
	[MAIL_EVENT_PENDING] = mail_event_pending,
	[MAIL_EVENT_FAILED] = mail_event_failed,
	[MAIL_COUNT_PENDING] = mail_count_pending,
	[MAIL_COUNT_FAILED] = mail_count_failed,
	[MAIL_RESUME] = mail_resume,
	[MAIL_AUTHED] = mail_authed,
};

/* How soon the service thread hands nng more of the backlog while it holds
 * some: nng's own buffer (1024 requests) lasts stored well beyond this. */
#define SERVICE_PUMP_US 2000

static void service_pump_tick(lws_sorted_usec_list_t *sul)
{
	struct service *sv = lws_container_of(sul, struct service, pump_tick);
	struct relayd *r = sv->r;

	sv->pump_armed = false;
	service_pump(r);
}

void service_pump(struct relayd *r)
{
	if (link_pump(r) && !r->service->pump_armed) {
		r->service->pump_armed = true;
		lws_sul_schedule(r->lws, 0, &r->service->pump_tick, service_pump_tick, SERVICE_PUMP_US);
	}
}

static void service_handle(struct relayd *r, struct mail *m)
{
	struct conn *c;

	switch (m->kind) {
	case MAIL_RPC: answer_rpc(r, m->msg); return;
	case MAIL_DELIVER:
		link_deliver_taken(r);
		answer_deliver(r, m->msg);
		return;
	case MAIL_LINK_UP: mail_link_up(r); return;
	case MAIL_LINK_DOWN: mail_link_down(r); return;
	case MAIL_RELOAD: reload_apply(r); return;
	case MAIL_PUMP: service_pump(r); return;
	default: break;
	}
	/* A lane counts queued messages per slot, and a freed slot is taken
	 * by the next connection at once: the message whose taking brought the
	 * count down may be of the slot's previous connection, closed with
	 * messages still queued, while its new one is the one paused. */
	if (m->kind == MAIL_RESUME)
		c = conn_in_slot(r->conns, conn_id_slot(m->conn_id));
	else
		c = conn_find(r->conns, m->conn_id);
	if (!c) {
		atomic_fetch_add(&r->stats.stale_replies, 1);
		return;
	}
	conn_mail_handlers[m->kind](r, c, m);
}

void service_drain(struct relayd *r)
{
	struct mail *m = mailbox_drain(r->mailbox), *next;

	send_hold(r);
	for (; m; m = next) {
		next = m->next;
		service_handle(r, m);
		mail_free(m);
	}
	send_flush(r);
}

/* A history or resume stored has sent nothing for within answer_timeout_ms
 * is closed: its answer may have been dropped on the way (reply.h), and a
 * client waiting for an EOSE that never comes would wait for ever.  The
 * bound is long (a minute by default) because a history may rightly wait
 * that long in stored's query queue behind other clients' jobs.  stored
 * unfiles it; anything it still sends for it is dropped (the serial is gone). */
static uint32_t service_expire_subs(struct relayd *r, struct conn *c, int64_t now)
{
	uint32_t expired = 0;

	if (!r->service->answers_due)
		return 0;
	/* Backwards: conn_sub_remove() moves the last subscription into the
	 * removed one's place. */
	for (uint32_t i = c->nsubs; i-- > 0;) {
		struct sub *s = c->subs[i];

		if (s->state == SUB_LIVE || s->answer_deadline_ms > now)
			continue;
		service_closed(r, c, s->id, s->id_len, "error: storage did not answer in time, retry");
		subreg_close(r, c, s);
		conn_sub_remove(c, s);
		expired++;
	}
	return expired;
}

static void service_expire(struct conn *c, void *arg)
{
	struct relayd *r = arg;
	struct count_closing cc = { r, c, "error: storage did not answer in time, retry" };
	int64_t now = deadline_now_ms();
	uint32_t expired = 0;

	while (c->npending && c->pending[0].deadline_ms <= now) {
		struct pending_event p;

		conn_pending_take(c, c->pending[0].request_id, &p);
		service_ok(r, c, p.id, "error: storage did not answer in time, retry");
		expired++;
	}
	expired += count_waits_expire(&c->counts, now, service_close_count, &cc);
	expired += service_expire_subs(r, c, now);
	if (expired)
		atomic_fetch_add(&r->stats.store_timeouts, expired);
}

static void service_report(struct relayd *r)
{
	uint32_t request_id = link_request_id(r);
	struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
	struct msg_worker_stats m = {
		(uint32_t)getpid(), r->started_at, conn_count(r->conns), conn_sub_total(r->conns),
		atomic_load(&r->stats.messages_in), atomic_load(&r->stats.messages_out),
		atomic_load(&r->stats.events_rejected), atomic_load(&r->stats.deliver_gaps),
		atomic_load(&r->stats.rate_limited), atomic_load(&r->stats.conns_refused),
		atomic_load(&r->stats.lane_refused), atomic_load(&r->stats.reads_paused),
		atomic_load(&r->stats.requests_on_loop), link_relistens(r),
		wsguard_refused(), atomic_load(&r->stats.store_timeouts),
		atomic_load(&r->stats.too_big_closed), atomic_load(&r->stats.pings_sent),
		atomic_load(&r->stats.ping_timeouts), r->ok_latency, { 0 }
	};
	struct buf out = BUF_INIT;

	procstat_read(&m.proc); /* a figure it cannot read goes as 0 */
	if (msg_encode_worker_stats(&out, &h, &m) == 0)
		service_request(r, &out, request_id);
	else
		buf_free(&out);
}

/* After a burst the worker's heap keeps the freed memory resident, so it
 * is trimmed every heap_trim_interval seconds (heaptrim.h). */
static void service_trim(struct relayd *r)
{
	struct heaptrim *t = &r->service->heaptrim;

	t->interval_s = relayd_cfg(r)->heap_trim_interval; /* may be reloaded */
	if (heaptrim_tick(t, deadline_now_ms()))
		log_debug("heap trimmed in %lld us", (long long)t->last_us);
}

/* The tick's one pass over the connections. */
static void service_sweep(struct conn *c, void *arg)
{
	service_expire(c, arg);
	keepalive_check(arg, c);
}

void service_tick(struct relayd *r)
{
	keepalive_tick(r);
	conn_foreach(r->conns, service_sweep, r);
	service_pump(r); /* in case a MAIL_PUMP could not be allocated */
	iplimit_sweep(r->iplimit, deadline_now_ms());
	nip86_expire(r, deadline_now_ms());
	service_report(r);
	service_trim(r);
}

void service_conn_gone(struct relayd *r, struct conn *c)
{
	uint32_t request_id = link_request_id(r);
	struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
	struct msg_conn_closed m = { c->id };
	struct buf out = BUF_INIT;

	/* Also when its subscriptions are all closed here: one whose history
	 * ended CLOSED may still be in stored's index if its SUB_CLOSE could
	 * not be sent (the link was down). */
	if (c->registered && msg_encode_conn_closed(&out, &h, &m) == 0)
		service_control(r, &out, request_id);
	else
		buf_free(&out);
	if (r->ingress) /* NULL while the worker shuts down */
		ingress_forget(r->ingress, c->id);
	iplimit_disconnect(r->iplimit, c->ip, c->ip_counted);
	conn_close(r->conns, c);
}
