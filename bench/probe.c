/* probe.c - the bystander's thread (see probe.h). */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/hex.h"
#include "clock.h"
#include "relay_msg.h"
#include "stats.h"
#include "../common/ws_client.h"

struct probe_run {
	struct probe *p;
	struct ws_loop *loop;
	struct ws_conn *ws;
};

static void probe_on_open(struct ws_conn *ws, void *ud)
{
	struct probe_run *r = ud;

	r->p->worker = ws_conn_worker(ws);
	atomic_store(&r->p->state, 1);
}

static void probe_send_close(struct ws_conn *ws, uint64_t seq)
{
	char close[48];
	int n = snprintf(close, sizeof(close), "[\"CLOSE\",\"p%llu\"]", (unsigned long long)seq);

	ws_send_text(ws, close, (size_t)n);
}

/* The slot of the REQ whose sub id is "p<seq>", or -1. */
static int probe_slot(struct probe *p, const char *sub, size_t len)
{
	char text[24];
	uint64_t seq;
	int i;

	if (len < 2 || len >= sizeof(text) || sub[0] != 'p')
		return -1;
	memcpy(text, sub + 1, len - 1);
	text[len - 1] = '\0';
	seq = strtoull(text, NULL, 10);
	i = (int)(seq % PROBE_MAX_OUT);
	return p->out[i].used && p->out[i].seq == seq ? i : -1;
}

static void probe_on_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct probe_run *r = ud;
	struct probe *p = r->p;
	struct relay_msg m;
	int i;

	if (relay_msg_scan(data, len, &m) || (m.type != RMSG_EOSE && m.type != RMSG_CLOSED))
		return;
	i = probe_slot(p, m.arg, m.arg_len);
	if (i < 0)
		return;
	p->out[i].used = 0;
	if (m.type == RMSG_CLOSED) {
		p->closed++;
		return;
	}
	hist_record(p->lat[p->out[i].phase], clock_ns() - p->out[i].sent_ns);
	p->answered++;
	probe_send_close(ws, p->out[i].seq);
}

static void probe_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct probe_run *r = ud;

	(void)ws;
	(void)err;
	r->ws = NULL;
	atomic_store(&r->p->state, -1);
}

static const struct ws_handlers probe_handlers = { probe_on_open, probe_on_message,
						   probe_on_close };

/* Records as lost every REQ sent before cutoff that is still unanswered. */
static void probe_give_up(struct probe_run *r, uint64_t now, uint64_t cutoff)
{
	struct probe *p = r->p;

	for (int i = 0; i < PROBE_MAX_OUT; i++) {
		if (!p->out[i].used || p->out[i].sent_ns > cutoff)
			continue;
		hist_record(p->lat[p->out[i].phase], now - p->out[i].sent_ns);
		p->out[i].used = 0;
		p->lost++;
		if (r->ws)
			probe_send_close(r->ws, p->out[i].seq);
	}
}

static int probe_outstanding(const struct probe *p)
{
	int n = 0;

	for (int i = 0; i < PROBE_MAX_OUT; i++)
		n += p->out[i].used != 0;
	return n;
}

static void probe_send(struct probe_run *r)
{
	struct probe *p = r->p;
	uint8_t id[32];
	char idhex[65], req[160];
	int i = (int)(p->seq % PROBE_MAX_OUT), n, phase = atomic_load(&p->phase);

	if (p->out[i].used) {
		p->skipped++;
		return;
	}
	rng_bytes(&p->rng, id, sizeof(id));
	hex_encode(id, sizeof(id), idhex);
	n = snprintf(req, sizeof(req), "[\"REQ\",\"p%llu\",{\"ids\":[\"%s\"],\"limit\":1}]",
		     (unsigned long long)p->seq, idhex);
	p->out[i].seq = p->seq++;
	p->out[i].phase = phase > 0 ? 1 : 0;
	p->out[i].used = 1;
	p->out[i].sent_ns = clock_ns();
	ws_send_text(r->ws, req, (size_t)n);
	ws_flush(r->ws);
	p->sent++;
}

static void *probe_main(void *arg)
{
	struct probe_run r = { arg, NULL, NULL };
	struct probe *p = r.p;
	uint64_t now = clock_ns(), end = now + (uint64_t)(p->max_s * 1e9);
	uint64_t step = (uint64_t)p->interval_ms * NS_PER_MS, next = now;

	r.loop = ws_loop_new(1u << 20);
	r.ws = r.loop ? ws_connect(r.loop, p->url, &probe_handlers, &r) : NULL;
	if (!r.ws)
		atomic_store(&p->state, -1);
	while (r.ws && atomic_load(&p->phase) < 2 && (now = clock_ns()) < end) {
		if (now > PROBE_GIVE_UP_NS)
			probe_give_up(&r, now, now - PROBE_GIVE_UP_NS);
		if (now >= next && ws_conn_is_open(r.ws)) {
			probe_send(&r);
			next += step;
			if (next < now) /* we fell behind by more than a tick */
				next = now + step;
		}
		ws_loop_poll(r.loop, now >= next ? 0 : (long)((next - now) / 1000));
	}
	/* The REQs still on their way get PROBE_DRAIN_NS to come back: the last
	 * one sent is usually in flight when the flood ends. */
	end = clock_ns() + PROBE_DRAIN_NS;
	while (r.ws && ws_conn_is_open(r.ws) && probe_outstanding(p) && clock_ns() < end)
		ws_loop_poll(r.loop, 1000);
	probe_give_up(&r, clock_ns(), UINT64_MAX);
	ws_loop_free(r.loop);
	return NULL;
}

int probe_start(struct probe *p)
{
	p->lat[0] = hist_new();
	p->lat[1] = hist_new();
	if (!p->lat[0] || !p->lat[1])
		return ERR_NOMEM;
	rng_seed(&p->rng, clock_ns());
	atomic_store(&p->phase, 0);
	atomic_store(&p->state, 0);
	return pthread_create(&p->thread, NULL, probe_main, p) ? ERR_IO : 0;
}

int probe_wait_open(struct probe *p, double timeout_s)
{
	uint64_t end = clock_ns() + (uint64_t)(timeout_s * 1e9);

	while (atomic_load(&p->state) == 0 && clock_ns() < end)
		clock_sleep_ns(NS_PER_MS);
	return atomic_load(&p->state) == 1;
}

void probe_set_phase(struct probe *p, int phase)
{
	atomic_store(&p->phase, phase);
}

void probe_join(struct probe *p)
{
	atomic_store(&p->phase, 2);
	pthread_join(p->thread, NULL);
}

void probe_free(struct probe *p)
{
	hist_free(p->lat[0]);
	hist_free(p->lat[1]);
	p->lat[0] = p->lat[1] = NULL;
}
