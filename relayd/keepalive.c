/* keepalive.c - websocket pings for idle connections (see keepalive.h). */
#include "keepalive.h"

#include <libwebsockets.h>

#include "../common/deadline.h"
#include "../common/log.h"
#include "conn.h"
#include "relayd.h"
#include "send.h"

void keepalive_tick(struct relayd *r)
{
	r->keepalive_s = (uint16_t)(deadline_now_ms() / 1000);
}

void keepalive_heard(struct relayd *r, struct conn *c)
{
	c->heard_s = r->keepalive_s;
	c->ping_waiting = false;
}

void keepalive_check(struct relayd *r, struct conn *c)
{
	uint32_t interval = relayd_cfg(r)->ping_interval;
	uint16_t idle;

	if (interval == 0 || c->closing)
		return;
	/* A paused connection is not read, so its pong would go unseen. */
	if (c->rx_paused) {
		keepalive_heard(r, c);
		return;
	}
	/* 16 bits of seconds: config.c caps ping_interval well below 2^15.
	 * Ticks read the clock in whole seconds, so "more than interval"
	 * gives a ping at least interval seconds to be answered. */
	idle = (uint16_t)(r->keepalive_s - c->heard_s);
	if (c->ping_waiting && idle > interval) {
		atomic_fetch_add(&r->stats.ping_timeouts, 1);
		log_info("closing %s: no answer to a ping in %u s", c->ip, interval);
		send_close(c, LWS_CLOSE_STATUS_NOSTATUS, "");
	} else if (!c->ping_waiting && idle >= interval) {
		c->heard_s = r->keepalive_s; /* the answer's interval starts now */
		c->ping_waiting = true;
		c->ping_due = true;
		lws_callback_on_writable(c->wsi);
	}
}
