/*
 * fanout.c - `loadgen fanout`: S subscribers to kinds:[1] (fanout_subs.c)
 * and one publisher sending R signed kind-1 events a second for T seconds;
 * reports publish->delivery latency, missing deliveries, and whether the
 * load generator itself kept up (its subscriber threads' CPU and how far
 * the publisher fell behind its schedule).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "fanout.h"
#include "nostr_sign.h"
#include "procstat.h"
#include "relay_msg.h"
#include "report.h"
#include "stats.h"
#include "../common/ws_client.h"

struct fo_opts {
	const char *url, *pids;
	long subs, rate, size, threads, seed, timeline_ms;
	double duration, drain, setup;
	long deflate; /* 1: every connection offers permessage-deflate */
};

/* The publisher's connection and what it has learnt. */
struct fo_pub {
	struct ws_conn *ws;
	struct nostr_signer *signer;
	struct nostr_key key;
	struct buf content, event;
	uint64_t sent, accepted, rejected;
	uint64_t max_lag_ns; /* worst lateness against the schedule */
	bool open, gone;
};

static void fo_pub_open(struct ws_conn *ws, void *ud)
{
	(void)ws;
	((struct fo_pub *)ud)->open = true;
}

static void fo_pub_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct fo_pub *p = ud;
	struct relay_msg m;

	(void)ws;
	if (relay_msg_scan(data, len, &m) || m.type != RMSG_OK)
		return;
	if (m.accepted)
		p->accepted++;
	else
		p->rejected++;
}

static void fo_pub_close(struct ws_conn *ws, int err, void *ud)
{
	struct fo_pub *p = ud;

	(void)ws;
	(void)err;
	p->ws = NULL;
	p->gone = true;
}

static const struct ws_handlers fo_pub_handlers = { fo_pub_open, fo_pub_message, fo_pub_close };

/* Signs and sends event number seq. */
static int fo_publish(struct fo_pub *p, uint64_t seq, long size)
{
	struct nostr_draft d = { clock_wall(), 1, NULL, NULL, 0 };
	struct iovec iov[3];
	char head[64];
	int n = snprintf(head, sizeof(head), "bench seq=%llu t=%llu ", (unsigned long long)seq,
			 (unsigned long long)clock_ns());
	uint8_t id[32];

	buf_reset(&p->content);
	buf_append(&p->content, head, (size_t)n);
	while ((long)p->content.len < size)
		buf_append_byte(&p->content, (char)('a' + p->content.len % 26));
	d.content = p->content.data;
	d.content_len = p->content.len;
	buf_reset(&p->event);
	if (nostr_event_sign(p->signer, &p->key, &d, &p->event, id))
		return -1;
	iov[0] = (struct iovec){ (void *)"[\"EVENT\",", 9 };
	iov[1] = (struct iovec){ p->event.data, p->event.len };
	iov[2] = (struct iovec){ (void *)"]", 1 };
	if (ws_send_textv(p->ws, iov, 3))
		return -1;
	ws_flush(p->ws);
	p->sent++;
	return 0;
}

static int fo_ready(struct fo_thread *th, long n)
{
	int sum = 0;

	for (long i = 0; i < n; i++)
		sum += atomic_load(&th[i].ready);
	return sum;
}

static uint64_t fo_got(struct fo_thread *th, long n)
{
	uint64_t sum = 0;

	for (long i = 0; i < n; i++)
		sum += atomic_load_explicit(&th[i].got, memory_order_relaxed);
	return sum;
}

/* Publishes on schedule for o->duration seconds. */
static void fo_publish_all(const struct fo_opts *o, struct ws_loop *loop, struct fo_pub *p)
{
	uint64_t t0 = clock_ns(), total = (uint64_t)((double)o->rate * o->duration);
	double step = 1e9 / (double)o->rate;

	for (uint64_t seq = 0; seq < total && p->ws;) {
		uint64_t due = t0 + (uint64_t)(step * (double)seq), now = clock_ns();

		if (now >= due) {
			if (now - due > p->max_lag_ns)
				p->max_lag_ns = now - due;
			if (fo_publish(p, seq++, o->size))
				break;
			continue;
		}
		ws_loop_poll(loop, (long)((due - now) / 1000));
	}
}

/* Deliveries owed: every event the relay did not refuse, to every ready subscriber. */
static uint64_t fo_expected(const struct fo_pub *p, int ready)
{
	return (p->sent - p->rejected) * (uint64_t)ready;
}

/* Polls until every ready subscriber has every event, or drain s pass. */
static void fo_drain(const struct fo_opts *o, struct ws_loop *loop, struct fo_pub *p,
		     struct fo_thread *th, int ready)
{
	uint64_t end = clock_ns() + (uint64_t)(o->drain * 1e9);

	while (clock_ns() < end) {
		ws_loop_poll(loop, 5000);
		if (p->accepted + p->rejected >= p->sent &&
		    fo_got(th, o->threads) >= fo_expected(p, ready))
			break;
	}
}

struct fo_run {
	const struct fo_opts *o;
	struct fo_thread *th;
	struct fo_pub pub;
	struct ws_loop *loop;
	int ready, opened;
	uint64_t t0_ns;  /* first publish */
	double *cpu0_s;  /* each subscriber thread's CPU at the first publish */
	double sub_cpu_pct; /* the busiest subscriber thread, publish to end of drain */
	struct usage_report u;
};

/* Deliveries per second from the first publish to the last delivery. */
static double fo_delivery_rate(struct fo_run *r, uint64_t got)
{
	uint64_t last = 0;

	for (long i = 0; i < r->o->threads; i++) {
		uint64_t t = atomic_load_explicit(&r->th[i].last_ns, memory_order_relaxed);

		if (t > last)
			last = t;
	}
	return last > r->t0_ns ? (double)got * 1e9 / (double)(last - r->t0_ns) : 0;
}

/* Bytes the subscribers read, handshakes and EOSEs included (a few
 * hundred per subscriber, next to the deliveries). */
static uint64_t fo_wire_in(const struct fo_run *r)
{
	uint64_t n = 0;

	for (long i = 0; i < r->o->threads; i++)
		n += ws_loop_bytes_in(r->th[i].loop);
	return n;
}

static void fo_report_line(struct fo_run *r, const struct hist *lat, uint64_t got, uint64_t dup,
			   uint64_t unparsed, uint64_t closed, int lost)
{
	const struct fo_opts *o = r->o;
	uint64_t expected = fo_expected(&r->pub, r->ready);
	struct report rep;

	report_begin(&rep, "fanout");
	report_int(&rep, "subs", o->subs);
	report_int(&rep, "subs_opened", r->opened);
	report_int(&rep, "subs_ready", r->ready);
	report_int(&rep, "rate", o->rate);
	report_num(&rep, "duration_s", o->duration, 1);
	report_int(&rep, "published", (int64_t)r->pub.sent);
	report_int(&rep, "accepted", (int64_t)r->pub.accepted);
	report_int(&rep, "rejected", (int64_t)r->pub.rejected);
	report_int(&rep, "expected", (int64_t)expected);
	report_int(&rep, "delivered", (int64_t)got);
	report_int(&rep, "missing", (int64_t)(expected > got ? expected - got : 0));
	report_int(&rep, "duplicate", (int64_t)dup);
	report_int(&rep, "unparsed", (int64_t)unparsed);
	report_int(&rep, "subs_closed", (int64_t)closed);
	report_int(&rep, "subs_lost", lost);
	report_num(&rep, "deliveries_per_s", fo_delivery_rate(r, got), 1);
	report_hist(&rep, "lat", lat, 1);
	report_ms(&rep, "publisher_lag_max_ms", r->pub.max_lag_ns);
	report_num(&rep, "relay_cpu_pct", r->u.relay_cpu_pct, 1);
	report_int(&rep, "relay_rss_peak_kb", (int64_t)r->u.rss_peak_kb);
	report_num(&rep, "loadgen_cpu_pct", r->u.self_cpu_pct, 1);
	report_num(&rep, "other_cpu_pct", r->u.other_cpu_pct, 1);
	report_num(&rep, "steal_pct", r->u.steal_pct, 1);
	report_num(&rep, "sub_thread_cpu_pct_max", r->sub_cpu_pct, 1);
	report_int(&rep, "deflate", o->deflate);
	report_int(&rep, "sub_wire_in_bytes", (int64_t)fo_wire_in(r));
	report_num(&rep, "wire_bytes_per_delivery", got ? (double)fo_wire_in(r) / (double)got : 0, 1);
	report_end(&rep);
}

static void fo_report(struct fo_run *r)
{
	const struct fo_opts *o = r->o;
	struct hist *lat = hist_new();
	uint64_t dup = 0, unparsed = 0, closed = 0, got = fo_got(r->th, o->threads);
	int lost = 0;

	if (!lat)
		return;
	for (long i = 0; i < o->threads; i++) {
		hist_merge(lat, r->th[i].lat);
		dup += r->th[i].dup;
		unparsed += r->th[i].unparsed;
		closed += r->th[i].closed_msgs;
		lost += atomic_load(&r->th[i].lost);
	}
	printf("fanout: %d/%ld subscribers, %llu events at %ld/s: %llu of %llu deliveries, "
	       "p50 %.3f ms p99 %.3f ms max %.3f ms\n", r->ready, o->subs,
	       (unsigned long long)r->pub.sent, o->rate, (unsigned long long)got,
	       (unsigned long long)fo_expected(&r->pub, r->ready), hist_percentile(lat, 50) / 1e6,
	       hist_percentile(lat, 99) / 1e6, hist_max(lat) / 1e6);
	fo_timeline_print(r->th, o->threads, r->pub.sent, o->rate, o->timeline_ms);
	fo_report_line(r, lat, got, dup, unparsed, closed, lost);
	hist_free(lat);
}

static int fo_opened(struct fo_thread *th, long n)
{
	int sum = 0;

	for (long i = 0; i < n; i++)
		sum += atomic_load(&th[i].opened);
	return sum;
}

/*
 * Waits until every subscriber is ready and the publisher is open, for at
 * most setup seconds, or 5 s after the last subscriber became ready when
 * some never do.
 */
static int fo_setup(struct fo_run *r, const struct ws_url *url)
{
	uint64_t now = clock_ns(), end = now + (uint64_t)(r->o->setup * 1e9), moved = now;
	int seen = -1;

	r->pub.ws = ws_connect(r->loop, url, &fo_pub_handlers, &r->pub);
	while ((now = clock_ns()) < end && now - moved < 5 * NS_PER_S && r->pub.ws &&
	       (!r->pub.open || r->ready < r->o->subs)) {
		ws_loop_poll(r->loop, 10000);
		r->ready = fo_ready(r->th, r->o->threads);
		if (r->ready != seen)
			seen = r->ready, moved = now;
	}
	r->opened = fo_opened(r->th, r->o->threads);
	if (!r->pub.open) {
		fprintf(stderr, "loadgen fanout: the publisher could not connect\n");
		return -1;
	}
	if (r->ready < r->o->subs)
		fprintf(stderr, "loadgen fanout: only %d of %ld subscribers ready (%d opened)\n",
			r->ready, r->o->subs, r->opened);
	return 0;
}

static void fo_mark_cpu(struct fo_run *r)
{
	double wall = (double)(clock_ns() - r->t0_ns) / 1e9;

	for (long i = 0; i < r->o->threads; i++) {
		double pct = wall > 0 ? 100 * (fo_thread_cpu_s(&r->th[i]) - r->cpu0_s[i]) / wall : 0;

		if (pct > r->sub_cpu_pct)
			r->sub_cpu_pct = pct;
	}
}

static int fo_run_all(struct fo_run *r, const struct ws_url *url, struct usage_meter *meter)
{
	if (fo_setup(r, url))
		return 1;
	usage_start(meter);
	for (long i = 0; i < r->o->threads; i++)
		r->cpu0_s[i] = fo_thread_cpu_s(&r->th[i]);
	r->t0_ns = clock_ns();
	fo_publish_all(r->o, r->loop, &r->pub);
	fo_drain(r->o, r->loop, &r->pub, r->th, r->ready);
	fo_mark_cpu(r);
	usage_finish(meter, &r->u);
	return 0;
}

static int fo_start_threads(struct fo_run *r, const struct ws_url *url, atomic_int *stop)
{
	const struct fo_opts *o = r->o;
	uint32_t max_events = (uint32_t)((double)o->rate * o->duration) + 16;

	for (long i = 0; i < o->threads; i++) {
		struct fo_thread *t = &r->th[i];

		t->url = url;
		t->timeline = o->timeline_ms > 0;
		t->nsubs = (int)(o->subs / o->threads + (i < o->subs % o->threads));
		t->max_events = max_events;
		t->max_s = o->setup + o->duration + o->drain + 30;
		t->stop = stop;
		t->deflate = o->deflate != 0;
		if (fo_thread_start(t))
			return (int)i;
	}
	return (int)o->threads;
}

static int fo_go(const struct fo_opts *o, const struct ws_url *url, struct usage_meter *meter)
{
	struct fo_run r = { .o = o };
	atomic_int stop = 0;
	int started, rc = 1;

	r.th = calloc((size_t)o->threads, sizeof(*r.th));
	r.cpu0_s = calloc((size_t)o->threads, sizeof(*r.cpu0_s));
	r.loop = ws_loop_new(1u << 20);
	r.pub.signer = nostr_signer_new();
	if (!r.th || !r.cpu0_s || !r.loop || !r.pub.signer ||
	    (o->deflate && ws_loop_offer_deflate(r.loop))) {
		free(r.th);
		free(r.cpu0_s);
		ws_loop_free(r.loop);
		nostr_signer_free(r.pub.signer);
		return 1;
	}
	nostr_key_derive(r.pub.signer, (uint64_t)o->seed, 1000000, &r.pub.key);
	started = fo_start_threads(&r, url, &stop);
	if (started == o->threads)
		rc = fo_run_all(&r, url, meter);
	atomic_store(&stop, 1);
	for (int i = 0; i < started; i++)
		fo_thread_join(&r.th[i]);
	if (!rc)
		fo_report(&r);
	for (long i = 0; i < o->threads; i++)
		fo_thread_free(&r.th[i]);
	free(r.th);
	free(r.cpu0_s);
	ws_loop_free(r.loop);
	nostr_signer_free(r.pub.signer);
	buf_free(&r.pub.content);
	buf_free(&r.pub.event);
	return rc;
}

int cmd_fanout(int argc, char **argv)
{
	struct fo_opts o = { "ws://127.0.0.1:7777", "", 100, 1000, 200, 1, 1, 0, 10, 10, 60, 0 };
	const struct cli_opt opts[] = {
		{ "url", CLI_STR, &o.url, "relay (loopback only)" },
		{ "subs", CLI_INT, &o.subs, "subscriber connections" },
		{ "rate", CLI_INT, &o.rate, "events published per second" },
		{ "duration", CLI_DOUBLE, &o.duration, "seconds of publishing" },
		{ "size", CLI_INT, &o.size, "bytes of content per event" },
		{ "threads", CLI_INT, &o.threads, "subscriber threads in the load generator" },
		{ "drain", CLI_DOUBLE, &o.drain, "seconds to wait for late deliveries" },
		{ "setup", CLI_DOUBLE, &o.setup, "seconds allowed to open and subscribe" },
		{ "seed", CLI_INT, &o.seed, "seed of the publisher's key" },
		{ "pids", CLI_STR, &o.pids, "relay pids to measure, comma-separated" },
		{ "deflate", CLI_INT, &o.deflate, "1: offer permessage-deflate on every connection" },
		{ "timeline", CLI_INT, &o.timeline_ms,
		  "also print, per this many ms of publishing, the events' worst deliveries" },
	};
	int rc = cli_parse("Times live deliveries to many subscribers.", opts, CLI_COUNT(opts),
			   argc, argv);
	struct usage_meter meter;
	struct ws_url url;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (ws_url_parse(o.url, &url) || usage_parse_pids(&meter, o.pids) || o.subs < 1 ||
	    o.rate < 1 || o.duration <= 0 || o.size < 40 || o.threads < 1 || o.threads > o.subs ||
	    o.timeline_ms < 0 ||
	    o.rate * o.duration > 1e8) {
		fprintf(stderr, "loadgen fanout: bad --url (loopback only), --pids or counts\n");
		return 2;
	}
	fdlimit_raise(o.subs + 64);
	return fo_go(&o, &url, &meter);
}
