/* countflood.c - C connections keeping W heavy COUNTs in flight (see countflood.h). */
#include "countflood.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "clock.h"
#include "relay_msg.h"
#include "../common/ws_client.h"

#define CF_DRAIN_NS (15 * NS_PER_S)

struct cf_conn {
	struct countflood *f;
	struct ws_conn *ws;
	int out;    /* COUNTs sent, not yet answered */
	bool open, gone;
	bool closing; /* fresh: answered, to be replaced once closed */
};

struct countflood {
	const struct countflood_cfg *cfg;
	struct countflood_stats *st;
	char *msg_tail; /* ",{filter},{filter}…]" */
	size_t msg_tail_len;
	bool sending;
	uint64_t first_ns, last_ns;
	struct ws_loop *loop;
};

/* COUNTs one connection keeps in flight. */
static int cf_window(const struct countflood_cfg *cfg)
{
	return cfg->fresh ? 1 : cfg->window;
}

static void cf_send(struct cf_conn *c)
{
	struct countflood *f = c->f;

	while (f->sending && c->open && !c->closing && c->out < cf_window(f->cfg)) {
		char head[48];
		int n = snprintf(head, sizeof(head), "[\"COUNT\",\"cf%llu\"",
				 (unsigned long long)f->st->sent);
		struct iovec iov[2] = { { head, (size_t)n }, { f->msg_tail, f->msg_tail_len } };

		if (ws_send_textv(c->ws, iov, 2))
			return;
		if (f->st->sent++ == 0)
			f->first_ns = clock_ns();
		c->out++;
	}
}

static void cf_on_open(struct ws_conn *ws, void *ud)
{
	struct cf_conn *c = ud;

	(void)ws;
	c->open = true;
	c->f->st->conns_opened++;
	cf_send(c);
}

static void cf_on_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct cf_conn *c = ud;
	struct countflood_stats *st = c->f->st;
	struct relay_msg m;

	(void)ws;
	if (len > 9 && memcmp(data, "[\"COUNT\",", 9) == 0) {
		st->counted++;
	} else if (relay_msg_scan(data, len, &m) == 0 && m.type == RMSG_CLOSED) {
		if (st->closed++ == 0)
			snprintf(st->first_closed, sizeof(st->first_closed), "%.*s",
				 (int)m.text_len, m.text);
	} else {
		return;
	}
	c->out--;
	c->f->last_ns = clock_ns();
	if (c->f->cfg->fresh) {
		c->closing = true;
		ws_close(c->ws);
		return;
	}
	cf_send(c);
}

static const struct ws_handlers cf_handlers;

static void cf_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct cf_conn *c = ud;

	(void)ws;
	(void)err;
	if (c->open && c->out > 0)
		c->f->st->conns_lost++;
	c->open = false;
	c->gone = true;
	if (c->closing && c->f->sending) { /* fresh: the next COUNT's connection */
		c->closing = false;
		c->ws = ws_connect(c->f->loop, c->f->cfg->url, &cf_handlers, c);
		c->gone = c->ws == NULL;
	}
}

static const struct ws_handlers cf_handlers = { cf_on_open, cf_on_message, cf_on_close };

/* ",{"kinds":[1],"since":0},…]": filters matching nearly every note. */
static char *cf_tail(int filters, size_t *len)
{
	size_t cap = (size_t)filters * 40 + 4;
	char *s = malloc(cap);
	size_t n = 0;

	if (!s)
		return NULL;
	for (int i = 0; i < filters; i++)
		n += (size_t)snprintf(s + n, cap - n, ",{\"kinds\":[1],\"since\":%d}", i);
	n += (size_t)snprintf(s + n, cap - n, "]");
	*len = n;
	return s;
}

static uint64_t cf_out_total(const struct cf_conn *conns, int n)
{
	uint64_t out = 0;

	for (int i = 0; i < n; i++)
		if (!conns[i].gone)
			out += (uint64_t)conns[i].out;
	return out;
}

int countflood_run(const struct countflood_cfg *cfg, struct countflood_stats *out)
{
	struct countflood f = { cfg, out, NULL, 0, true, 0, 0, NULL };
	struct ws_loop *loop;
	struct cf_conn *conns;
	uint64_t start = clock_ns(), stop_ns, give_up_ns, next_tick;
	int nconns = cfg->fresh ? cfg->conns * cfg->window : cfg->conns;

	memset(out, 0, sizeof(*out));
	if (cfg->conns < 1 || cfg->window < 1 || cfg->filters < 1 || cfg->duration_s <= 0)
		return ERR_INVAL;
	f.msg_tail = cf_tail(cfg->filters, &f.msg_tail_len);
	conns = calloc((size_t)nconns, sizeof(*conns));
	loop = f.loop = ws_loop_new(1 << 20);
	if (!f.msg_tail || !conns || !loop) {
		free(f.msg_tail);
		free(conns);
		ws_loop_free(loop);
		return ERR_NOMEM;
	}
	for (int i = 0; i < nconns; i++) {
		conns[i].f = &f;
		conns[i].ws = ws_connect(loop, cfg->url, &cf_handlers, &conns[i]);
		conns[i].gone = conns[i].ws == NULL;
	}
	stop_ns = start + (uint64_t)(cfg->duration_s * 1e9);
	give_up_ns = stop_ns + CF_DRAIN_NS;
	next_tick = start + 100 * NS_PER_MS;
	/* Bounded: sending ends at stop_ns, waiting for answers at give_up_ns. */
	for (uint64_t now = clock_ns(); now < give_up_ns; now = clock_ns()) {
		if (now >= stop_ns)
			f.sending = false;
		if (!f.sending && cf_out_total(conns, nconns) == 0)
			break;
		if (ws_loop_live(loop) == 0)
			break;
		if (ws_loop_poll(loop, 10000) < 0)
			break;
		if (now >= next_tick) {
			next_tick += 100 * NS_PER_MS;
			if (cfg->tick)
				cfg->tick(cfg->tick_arg);
		}
	}
	for (int i = 0; i < nconns; i++)
		out->unanswered += (uint64_t)conns[i].out;
	out->elapsed_s = f.last_ns > f.first_ns ? (double)(f.last_ns - f.first_ns) / 1e9 : 0;
	ws_loop_free(loop);
	free(conns);
	free(f.msg_tail);
	return 0;
}
