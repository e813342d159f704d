/*
 * fanout_subs.c - fan-out subscribers: connections with
 * ["REQ","f",{"kinds":[1],"limit":0}] on threads of their own, timing every
 * live delivery (see fanout.h).  Connections are opened at most
 * FO_PENDING at a time so the relay's accept queue is never flooded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/err.h"
#include "clock.h"
#include "fanout.h"
#include "relay_msg.h"
#include "stats.h"
#include "../common/ws_client.h"

#define FO_PENDING 128

static const char fo_req[] = "[\"REQ\",\"f\",{\"kinds\":[1],\"limit\":0}]";

static void fo_on_open(struct ws_conn *ws, void *ud)
{
	struct fo_sub *s = ud;

	s->opened = true;
	atomic_fetch_add(&s->t->opened, 1);
	ws_send_text(ws, fo_req, sizeof(fo_req) - 1);
}

/* Reads "bench seq=<n> t=<ns>" from an event's text. */
static int fo_parse(const char *text, size_t len, uint64_t *seq, uint64_t *t)
{
	const char *p = memmem(text, len, "bench seq=", 10);
	char *end;

	if (!p)
		return -1;
	*seq = strtoull(p + 10, &end, 10);
	if (strncmp(end, " t=", 3))
		return -1;
	*t = strtoull(end + 3, &end, 10);
	return 0;
}

static void fo_deliver(struct fo_sub *s, const struct relay_msg *m)
{
	struct fo_thread *t = s->t;
	uint64_t seq, sent, now = clock_ns();

	if (fo_parse(m->text, m->text_len, &seq, &sent) || seq >= t->max_events) {
		t->unparsed++;
		return;
	}
	if (s->seen[seq / 8] & (1u << (seq % 8))) {
		t->dup++;
		return;
	}
	s->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	hist_record(t->lat, now - sent);
	fo_timeline_note(t, seq, now - sent);
	atomic_fetch_add_explicit(&t->got, 1, memory_order_relaxed);
	atomic_store_explicit(&t->last_ns, now, memory_order_relaxed);
}

static void fo_on_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct fo_sub *s = ud;
	struct relay_msg m;

	(void)ws;
	if (relay_msg_scan(data, len, &m))
		return;
	if (m.type == RMSG_EVENT) {
		fo_deliver(s, &m);
	} else if (m.type == RMSG_EOSE && !s->ready) {
		s->ready = true;
		s->t->pending--;
		atomic_fetch_add(&s->t->ready, 1);
	} else if (m.type == RMSG_CLOSED) {
		s->t->closed_msgs++;
		if (!s->ready && !s->refused) { /* it will never be ready */
			s->refused = true;
			s->t->pending--;
		}
	}
}

static void fo_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct fo_sub *s = ud;

	(void)ws;
	(void)err;
	if (!s->ready && !s->refused)
		s->t->pending--;
	s->ws = NULL;
	if (!atomic_load(s->t->stop))
		atomic_fetch_add(&s->t->lost, 1);
}

static const struct ws_handlers fo_handlers = { fo_on_open, fo_on_message, fo_on_close };

static void fo_connect_more(struct fo_thread *t)
{
	while (t->next_connect < t->nsubs && t->pending < FO_PENDING) {
		struct fo_sub *s = &t->subs[t->next_connect++];

		s->ws = ws_connect(t->loop, t->url, &fo_handlers, s);
		if (s->ws)
			t->pending++;
		else
			atomic_fetch_add(&t->lost, 1);
	}
}

double fo_thread_cpu_s(const struct fo_thread *t)
{
	clockid_t id;
	struct timespec ts;

	if (pthread_getcpuclockid(t->th, &id) || clock_gettime(id, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *fo_thread_main(void *arg)
{
	struct fo_thread *t = arg;
	uint64_t end = clock_ns() + (uint64_t)(t->max_s * 1e9);

	while (!atomic_load(t->stop) && clock_ns() < end) {
		fo_connect_more(t);
		ws_loop_poll(t->loop, 5000);
	}
	return NULL;
}

int fo_thread_start(struct fo_thread *t)
{
	size_t bitmap = (t->max_events + 7) / 8;

	t->loop = ws_loop_new(1u << 20);
	t->lat = hist_new();
	t->subs = calloc((size_t)t->nsubs, sizeof(*t->subs));
	if (t->timeline)
		t->worst_us = calloc(t->max_events, sizeof(*t->worst_us));
	if (!t->loop || !t->lat || !t->subs || (t->timeline && !t->worst_us) ||
	    (t->deflate && ws_loop_offer_deflate(t->loop)))
		return ERR_NOMEM;
	for (int i = 0; i < t->nsubs; i++) {
		t->subs[i].t = t;
		t->subs[i].seen = calloc(1, bitmap);
		if (!t->subs[i].seen)
			return ERR_NOMEM;
	}
	return pthread_create(&t->th, NULL, fo_thread_main, t) ? ERR_IO : 0;
}

void fo_thread_join(struct fo_thread *t)
{
	pthread_join(t->th, NULL);
}

void fo_thread_free(struct fo_thread *t)
{
	ws_loop_free(t->loop);
	for (int i = 0; t->subs && i < t->nsubs; i++)
		free(t->subs[i].seen);
	free(t->subs);
	hist_free(t->lat);
	free(t->worst_us);
	t->worst_us = NULL;
	t->loop = NULL;
	t->subs = NULL;
	t->lat = NULL;
}
