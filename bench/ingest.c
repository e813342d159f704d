/*
 * ingest.c - the publishing engine (see ingest.h).
 *
 * Each connection keeps a small table of its EVENTs in flight (the id, which
 * points into the loaded file, and the send time); an OK is matched against
 * it by id, so answers may come in any order.  A freed slot is refilled at
 * once from the shared cursor.
 */
#include "ingest.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "clock.h"
#include "evfile.h"
#include "relay_msg.h"
#include "stats.h"
#include "../common/ws_client.h"

struct ing_slot {
	const char *id;
	uint64_t sent_ns;
};

struct ing_conn {
	struct ingest *g;
	struct ws_conn *ws; /* NULL once closed */
	struct ing_slot *slots;
	int inflight;
	bool opened;
};

struct ingest {
	const struct ingest_cfg *cfg;
	struct ingest_stats *st;
	struct ws_loop *loop;
	struct ing_conn *conns;
	uint64_t next;     /* cursor into the file */
	uint64_t answered; /* OKs matched */
	uint64_t abandoned; /* in flight on a connection that was lost */
	uint64_t first_ns, last_ns;
	bool finishing; /* our own closes are not losses */
};

static void ing_send_one(struct ing_conn *c)
{
	struct ingest *g = c->g;
	const struct evline *ev = &g->cfg->events->lines[g->next];
	struct iovec iov[3] = { { (void *)"[\"EVENT\",", 9 }, { (void *)ev->json, ev->len },
				{ (void *)"]", 1 } };
	uint64_t now = clock_ns();

	if (ws_send_textv(c->ws, iov, 3))
		return;
	c->slots[c->inflight++] = (struct ing_slot){ ev->id, now };
	if (!g->first_ns)
		g->first_ns = now;
	g->next++;
	g->st->sent++;
}

static void ing_fill(struct ing_conn *c)
{
	while (c->ws && c->inflight < c->g->cfg->window && c->g->next < c->g->cfg->count) {
		uint64_t before = c->g->next;

		ing_send_one(c);
		if (c->g->next == before)
			break;
	}
}

static void ing_on_open(struct ws_conn *ws, void *ud)
{
	struct ing_conn *c = ud;
	int w = ws_conn_worker(ws);

	c->opened = true;
	c->g->st->conns_opened++;
	c->g->st->per_worker[w >= 0 && w < INGEST_MAX_WORKERS ? w : INGEST_MAX_WORKERS]++;
	ing_fill(c);
}

/* The timeline's entry for now, or NULL past its end. */
static struct ingest_second *ing_second(struct ingest *g, uint64_t now)
{
	uint64_t i = (now - g->first_ns) / NS_PER_S;

	return i < g->st->nseconds ? &g->st->seconds[i] : NULL;
}

/* Counts the OK's verdict; "duplicate:" counts apart whatever the boolean.
 * An OK true, duplicate or not, is a promise: its id goes to cfg->acked. */
static void ing_judge(struct ingest *g, const struct relay_msg *m, const char *id, uint64_t now,
		      uint64_t lat)
{
	struct ingest_second *sec = ing_second(g, now);
	bool dup = m->text_len >= 10 && !memcmp(m->text, "duplicate:", 10);

	if (sec && lat > sec->max_ns)
		sec->max_ns = lat;
	if (m->accepted && g->cfg->acked)
		fprintf(g->cfg->acked, "%.64s\n", id);
	if (dup) {
		g->st->duplicate++;
		if (sec)
			sec->duplicate++;
	} else if (m->accepted) {
		g->st->accepted++;
		if (sec)
			sec->accepted++;
	} else {
		if (sec)
			sec->rejected++;
		if (!g->st->rejected)
			snprintf(g->st->first_reject, sizeof(g->st->first_reject), "%.*s",
				 (int)m->text_len, m->text);
		g->st->rejected++;
	}
}

static void ing_on_ok(struct ing_conn *c, const struct relay_msg *m)
{
	uint64_t now = clock_ns();

	for (int i = 0; i < c->inflight; i++) {
		if (m->arg_len != 64 || memcmp(c->slots[i].id, m->arg, 64))
			continue;
		uint64_t lat = now - c->slots[i].sent_ns;
		const char *id = c->slots[i].id;

		hist_record(c->g->st->ok_latency, lat);
		c->slots[i] = c->slots[--c->inflight];
		c->g->answered++;
		c->g->last_ns = now;
		ing_judge(c->g, m, id, now, lat);
		ing_fill(c);
		return;
	}
}

static void ing_on_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct ing_conn *c = ud;
	struct relay_msg m;

	(void)ws;
	if (relay_msg_scan(data, len, &m))
		return;
	if (m.type == RMSG_OK)
		ing_on_ok(c, &m);
	else if (m.type == RMSG_NOTICE)
		c->g->st->notices++;
}

static void ing_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct ing_conn *c = ud;

	(void)ws;
	(void)err;
	if (!c->opened)
		c->g->st->conns_failed++;
	else if (!c->g->finishing)
		c->g->st->conns_lost++;
	/* No OK can come for them now: unanswered, and not waited for. */
	c->g->abandoned += (uint64_t)c->inflight;
	c->inflight = 0;
	c->ws = NULL;
}

static const struct ws_handlers ing_handlers = { ing_on_open, ing_on_message, ing_on_close };

static bool ing_done(const struct ingest *g)
{
	if (ws_loop_live(g->loop) == 0)
		return true;
	return g->next == g->cfg->count && g->answered + g->abandoned == g->st->sent;
}

static void ing_loop(struct ingest *g)
{
	uint64_t deadline = clock_ns() + (uint64_t)(g->cfg->timeout_s * 1e9);
	uint64_t next_tick = clock_ns() + 100 * NS_PER_MS;

	while (!ing_done(g) && clock_ns() < deadline) {
		ws_loop_poll(g->loop, 20000);
		if (clock_ns() >= next_tick) {
			next_tick += 100 * NS_PER_MS;
			if (g->cfg->tick)
				g->cfg->tick(g->cfg->tick_arg);
		}
	}
}

static int ing_setup(struct ingest *g)
{
	const struct ingest_cfg *cfg = g->cfg;

	g->st->ok_latency = hist_new();
	g->st->nseconds = (uint32_t)cfg->timeout_s + 2;
	g->st->seconds = calloc(g->st->nseconds, sizeof(*g->st->seconds));
	g->loop = ws_loop_new(64u << 20);
	g->conns = calloc((size_t)cfg->conns, sizeof(*g->conns));
	if (!g->st->ok_latency || !g->st->seconds || !g->loop || !g->conns ||
	    (cfg->deflate && ws_loop_offer_deflate(g->loop)))
		return ERR_NOMEM;
	for (int i = 0; i < cfg->conns; i++) {
		struct ing_conn *c = &g->conns[i];

		c->g = g;
		c->slots = calloc((size_t)cfg->window, sizeof(*c->slots));
		if (!c->slots)
			return ERR_NOMEM;
		c->ws = ws_connect(g->loop, cfg->url, &ing_handlers, c);
		if (!c->ws)
			g->st->conns_failed++;
	}
	return 0;
}

static void ing_finish(struct ingest *g)
{
	uint64_t end = g->answered + g->abandoned == g->st->sent ? g->last_ns : clock_ns();

	g->st->unanswered = g->st->sent - g->answered;
	g->st->elapsed_s = g->first_ns ? (double)(end - g->first_ns) / 1e9 : 0;
	/* Close politely, but only wait briefly for the relay to agree. */
	g->finishing = true;
	for (int i = 0; i < g->cfg->conns; i++)
		if (g->conns[i].ws)
			ws_close(g->conns[i].ws);
	for (int i = 0; i < 50 && ws_loop_live(g->loop); i++)
		ws_loop_poll(g->loop, 10000);
}

int ingest_run(const struct ingest_cfg *cfg, struct ingest_stats *out)
{
	struct ingest g = { .cfg = cfg, .st = out };
	int rc;

	memset(out, 0, sizeof(*out));
	if (cfg->conns < 1 || cfg->window < 1 || cfg->count > cfg->events->count)
		return ERR_INVAL;
	rc = ing_setup(&g);
	if (!rc) {
		ing_loop(&g);
		ing_finish(&g);
	}
	if (g.loop) {
		out->wire_out = ws_loop_bytes_out(g.loop);
		out->wire_in = ws_loop_bytes_in(g.loop);
	}
	ws_loop_free(g.loop);
	for (int i = 0; g.conns && i < cfg->conns; i++)
		free(g.conns[i].slots);
	free(g.conns);
	if (rc)
		ingest_stats_free(out);
	return rc;
}

void ingest_stats_free(struct ingest_stats *s)
{
	hist_free(s->ok_latency);
	free(s->seconds);
	s->ok_latency = NULL;
	s->seconds = NULL;
}
