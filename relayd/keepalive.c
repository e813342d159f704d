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

enum keepalive_action keepalive_due(uint16_t now_s, uint16_t heard_s, bool waiting,
				    uint32_t interval)
{
	/* Ticks read the clock in whole seconds, so "more than interval"
	 * gives a ping at least interval seconds to be answered. */
	uint16_t idle = (uint16_t)(now_s - heard_s);

	if (waiting)
		return idle > interval ? KEEPALIVE_CLOSE : KEEPALIVE_NONE;
	return idle >= interval ? KEEPALIVE_PING : KEEPALIVE_NONE;
}

void keepalive_check(struct relayd *r, struct conn *c)
{
	uint32_t interval = relayd_cfg(r)->ping_interval;

	if (interval == 0 || c->closing)
		return;
	/* A paused connection is not read, so its pong would go unseen. */
	if (c->rx_paused) {
		keepalive_heard(r, c);
		return;
	}
	switch (keepalive_due(r->keepalive_s, c->heard_s, c->ping_waiting, interval)) {
	case KEEPALIVE_CLOSE:
		atomic_fetch_add(&r->stats.ping_timeouts, 1);
		log_info("closing %s: no answer to a ping in %u s", c->ip, interval);
		send_close(c, LWS_CLOSE_STATUS_NOSTATUS, "");
		break;
	case KEEPALIVE_PING:
		c->heard_s = r->keepalive_s; /* the answer's interval starts now */
		c->ping_waiting = true;
		c->ping_due = true;
		lws_callback_on_writable(c->wsi);
		break;
	case KEEPALIVE_NONE:
		break;
	}
}
