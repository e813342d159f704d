/*
 * conns.c - `loadgen conns`: opens N idle websocket connections (at most
 * --batch handshakes at a time), lets the relay settle, and reports how much
 * the relay's resident memory (all --pids together) grew per connection.
 *
 * rss_per_conn is the growth divided by the connections opened (what one
 * more connection costs); rss_total_per_conn is the whole RSS divided by
 * them (which includes the relay's fixed cost).
 *
 * Each connection costs a descriptor here and one in the relay: this
 * process raises its own RLIMIT_NOFILE, but the relay's processes need a
 * limit above their share of N too (`ulimit -n` before starting them).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "procstat.h"
#include "report.h"
#include "../common/ws_client.h"

#define CONNS_MAX_WORKERS 16

struct conns_opts {
	const char *url, *pids;
	long count, batch;
	double settle, hold, timeout;
	long deflate;
};

struct conns_run {
	const struct conns_opts *o;
	const struct ws_url *url;
	struct ws_loop *loop;
	struct ws_conn **ws;
	long started, opened, failed, lost, pending;
	int first_errno;
	long per_worker[CONNS_MAX_WORKERS + 1];
	bool closing;
};

struct conns_slot {
	struct conns_run *r;
	long i;
	bool open;
};

static void conns_on_open(struct ws_conn *ws, void *ud)
{
	struct conns_slot *s = ud;
	int w = ws_conn_worker(ws);

	s->open = true;
	s->r->opened++;
	s->r->pending--;
	s->r->per_worker[w >= 0 && w < CONNS_MAX_WORKERS ? w : CONNS_MAX_WORKERS]++;
}

static void conns_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct conns_slot *s = ud;

	if (!s->open) {
		s->r->failed++;
		s->r->pending--;
		if (!s->r->first_errno)
			s->r->first_errno = ws_conn_errno(ws) ? ws_conn_errno(ws) : -err;
	} else if (!s->r->closing) {
		s->r->lost++;
	}
	s->r->ws[s->i] = NULL;
}

static const struct ws_handlers conns_handlers = { conns_on_open, NULL, conns_on_close };

static void conns_open_more(struct conns_run *r, struct conns_slot *slots)
{
	while (r->started < r->o->count && r->pending < r->o->batch) {
		long i = r->started++;

		slots[i] = (struct conns_slot){ r, i, false };
		r->ws[i] = ws_connect(r->loop, r->url, &conns_handlers, &slots[i]);
		if (r->ws[i]) {
			r->pending++;
		} else {
			r->failed++;
			if (!r->first_errno)
				r->first_errno = errno;
		}
	}
}

/* Opens them all (bounded by --timeout); returns the seconds it took. */
static double conns_open_all(struct conns_run *r, struct conns_slot *slots)
{
	uint64_t t0 = clock_ns(), end = t0 + (uint64_t)(r->o->timeout * 1e9);

	while ((r->started < r->o->count || r->pending) && clock_ns() < end) {
		conns_open_more(r, slots);
		ws_loop_poll(r->loop, 10000);
	}
	return (double)(clock_ns() - t0) / 1e9;
}

/* Keeps the connections serviced (pings answered) for secs seconds. */
static void conns_idle(struct conns_run *r, double secs)
{
	for (uint64_t end = clock_ns() + (uint64_t)(secs * 1e9); clock_ns() < end;)
		ws_loop_poll(r->loop, 50000);
}

static void conns_report(struct conns_run *r, struct usage_meter *m, uint64_t before_kb,
			 uint64_t after_kb, double open_s)
{
	double per = r->opened ? ((double)after_kb - (double)before_kb) * 1024.0 / (double)r->opened
			       : 0;
	struct report rep;
	char key[32];

	printf("conns: %ld of %ld open in %.1f s; relay RSS %llu -> %llu KiB = %.0f bytes per "
	       "connection\n", r->opened, r->o->count, open_s, (unsigned long long)before_kb,
	       (unsigned long long)after_kb, per);
	if (r->failed)
		printf("conns: %ld failed, first: %s\n", r->failed,
		       r->first_errno > 0 ? strerror(r->first_errno) : "websocket error");
	report_begin(&rep, "conns");
	report_int(&rep, "requested", r->o->count);
	report_int(&rep, "opened", r->opened);
	report_int(&rep, "failed", r->failed);
	report_int(&rep, "lost", r->lost);
	report_num(&rep, "open_s", open_s, 2);
	report_int(&rep, "relay_rss_before_kb", (int64_t)before_kb);
	report_int(&rep, "relay_rss_after_kb", (int64_t)after_kb);
	report_num(&rep, "rss_per_conn_bytes", per, 0);
	report_num(&rep, "rss_per_conn_kb", per / 1024.0, 2);
	report_num(&rep, "rss_total_per_conn_kb", r->opened ? (double)after_kb / (double)r->opened : 0, 2);
	for (int w = 0; w <= CONNS_MAX_WORKERS; w++) {
		if (!r->per_worker[w])
			continue;
		snprintf(key, sizeof(key), "worker%d_conns", w < CONNS_MAX_WORKERS ? w : -1);
		report_int(&rep, key, r->per_worker[w]);
	}
	report_int(&rep, "pids", m->npids);
	report_end(&rep);
}

static int conns_go(struct conns_run *r, struct usage_meter *m)
{
	struct conns_slot *slots = calloc((size_t)r->o->count, sizeof(*slots));
	uint64_t before, after;
	double open_s;

	r->ws = calloc((size_t)r->o->count, sizeof(*r->ws));
	r->loop = ws_loop_new(1u << 20);
	if (!slots || !r->ws || !r->loop || (r->o->deflate && ws_loop_offer_deflate(r->loop))) {
		free(slots);
		free(r->ws);
		ws_loop_free(r->loop);
		return 1;
	}
	before = usage_sample(m);
	open_s = conns_open_all(r, slots);
	conns_idle(r, r->o->settle);
	after = usage_sample(m);
	conns_report(r, m, before, after, open_s);
	conns_idle(r, r->o->hold);
	r->closing = true;
	for (long i = 0; i < r->o->count; i++)
		if (r->ws[i])
			ws_close(r->ws[i]);
	for (int i = 0; i < 200 && ws_loop_live(r->loop); i++)
		ws_loop_poll(r->loop, 10000);
	ws_loop_free(r->loop);
	free(r->ws);
	free(slots);
	return 0;
}

int cmd_conns(int argc, char **argv)
{
	struct conns_opts o = { "ws://127.0.0.1:7777", "", 10000, 256, 3, 0, 120, 0 };
	const struct cli_opt opts[] = {
		{ "url", CLI_STR, &o.url, "relay (loopback only)" },
		{ "count", CLI_INT, &o.count, "connections to open" },
		{ "batch", CLI_INT, &o.batch, "handshakes in progress at once" },
		{ "settle", CLI_DOUBLE, &o.settle, "seconds to wait before measuring" },
		{ "hold", CLI_DOUBLE, &o.hold, "seconds to keep them open after measuring" },
		{ "timeout", CLI_DOUBLE, &o.timeout, "bound on opening them, seconds" },
		{ "pids", CLI_STR, &o.pids, "relay pids to measure, comma-separated" },
		{ "deflate", CLI_INT, &o.deflate, "1: offer permessage-deflate" },
	};
	int rc = cli_parse("Opens idle connections and reports the relay's RSS per connection.", opts,
			   CLI_COUNT(opts), argc, argv);
	struct conns_run r = { .o = &o };
	struct usage_meter meter;
	struct ws_url url;
	long limit;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (ws_url_parse(o.url, &url) || usage_parse_pids(&meter, o.pids) || o.count < 1 ||
	    o.batch < 1) {
		fprintf(stderr, "loadgen conns: bad --url (loopback only), --pids or counts\n");
		return 2;
	}
	limit = fdlimit_raise(o.count + 64);
	if (limit < o.count + 16)
		fprintf(stderr, "loadgen conns: RLIMIT_NOFILE is %ld; expect failures above it\n", limit);
	r.url = &url;
	return conns_go(&r, &meter);
}
