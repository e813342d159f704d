/*
 * bystander.c - `loadgen bystander`: is the flood stealing the loop from
 * everyone else?  A probe (probe.h) times a cheap REQ every --interval-ms,
 * first for --baseline seconds on a quiet relay, then while this process
 * floods the relay with --file over --conns connections (ingest.h), or with
 * heavy COUNTs over --count-flood connections for --duration seconds
 * (countflood.h), or, with neither, for --duration seconds (or until SIGINT)
 * while something else loads it.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "countflood.h"
#include "evfile.h"
#include "ingest.h"
#include "probe.h"
#include "procstat.h"
#include "report.h"
#include "stats.h"
#include "../common/ws_client.h"

struct bystander_opts {
	const char *url, *file, *pids;
	long conns, window, count, interval_ms;
	double baseline, duration, timeout;
	long count_flood, count_window, count_filters, count_fresh;
};

/* SIGINT or SIGTERM ends a --duration wait early, and the report follows:
 * a script stops the bystander when the load it watched is over. */
static volatile sig_atomic_t bystander_stop;

static void bystander_on_signal(int sig)
{
	(void)sig;
	bystander_stop = 1;
}

static void bystander_tick(void *arg)
{
	usage_sample(arg);
}

/* The load phase: the flood, or waiting while someone else loads the relay. */
static int bystander_load(const struct bystander_opts *o, const struct ws_url *url,
			  struct usage_meter *meter, struct ingest_stats *st,
			  struct countflood_stats *cst)
{
	struct evfile ev;
	struct ingest_cfg cfg;
	int rc;

	memset(st, 0, sizeof(*st));
	if (o->count_flood > 0) {
		struct countflood_cfg cf = { url, (int)o->count_flood, (int)o->count_window,
					     (int)o->count_fresh, (int)o->count_filters, o->duration,
					     bystander_tick, meter };

		return countflood_run(&cf, cst) ? 1 : 0;
	}
	if (!o->file || !*o->file) {
		signal(SIGINT, bystander_on_signal);
		signal(SIGTERM, bystander_on_signal);
		for (uint64_t end = clock_ns() + (uint64_t)(o->duration * 1e9);
		     clock_ns() < end && !bystander_stop;)
			clock_sleep_ns(100 * NS_PER_MS), usage_sample(meter);
		return 0;
	}
	if (evfile_load(o->file, &ev)) {
		fprintf(stderr, "loadgen bystander: cannot load %s\n", o->file);
		return 1;
	}
	cfg = (struct ingest_cfg){ url, &ev, o->count > 0 && (size_t)o->count < ev.count
						     ? (uint64_t)o->count : ev.count,
				   (int)o->conns, (int)o->window, o->timeout, NULL, bystander_tick, meter, 0 };
	rc = ingest_run(&cfg, st) ? 1 : 0;
	evfile_free(&ev);
	return rc;
}

static void bystander_report(const struct bystander_opts *o, const struct probe *p,
			     const struct ingest_stats *st, const struct countflood_stats *cst,
			     const struct usage_report *u)
{
	double rate = st->elapsed_s > 0 ? (double)st->accepted / st->elapsed_s : 0;
	struct report r;

	printf("bystander: quiet p50 %.3f ms p99 %.3f ms; under load p50 %.3f ms p99 %.3f ms "
	       "max %.3f ms (%llu samples, %llu lost, %llu skipped); flood %.0f accepted/s\n",
	       hist_percentile(p->lat[0], 50) / 1e6, hist_percentile(p->lat[0], 99) / 1e6,
	       hist_percentile(p->lat[1], 50) / 1e6, hist_percentile(p->lat[1], 99) / 1e6,
	       hist_max(p->lat[1]) / 1e6, (unsigned long long)hist_count(p->lat[1]),
	       (unsigned long long)p->lost, (unsigned long long)p->skipped, rate);
	if (o->count_flood > 0)
		printf("count flood: %llu COUNTs sent over %d connections, %llu counted, %llu closed%s%s,"
		       " %llu unanswered, %.1f/s\n", (unsigned long long)cst->sent, cst->conns_opened,
		       (unsigned long long)cst->counted, (unsigned long long)cst->closed,
		       cst->closed ? ": " : "", cst->first_closed, (unsigned long long)cst->unanswered,
		       cst->elapsed_s > 0 ? (double)(cst->counted + cst->closed) / cst->elapsed_s : 0);
	report_begin(&r, "bystander");
	report_int(&r, "interval_ms", o->interval_ms);
	report_int(&r, "flood_conns", o->file && *o->file ? o->conns : 0);
	report_hist(&r, "quiet", p->lat[0], 0);
	report_hist(&r, "probe", p->lat[1], 1);
	report_int(&r, "probe_sent", (int64_t)p->sent);
	report_int(&r, "probe_skipped", (int64_t)p->skipped);
	report_int(&r, "probe_lost", (int64_t)p->lost);
	report_int(&r, "probe_closed", (int64_t)p->closed);
	report_int(&r, "probe_worker", p->worker);
	report_int(&r, "count_flood_conns", o->count_flood);
	report_int(&r, "count_flood_fresh", o->count_fresh);
	report_int(&r, "count_flood_conns_opened", cst->conns_opened);
	report_int(&r, "count_flood_counted", (int64_t)cst->counted);
	report_int(&r, "count_flood_closed", (int64_t)cst->closed);
	report_int(&r, "count_flood_unanswered", (int64_t)cst->unanswered);
	report_int(&r, "flood_accepted", (int64_t)st->accepted);
	report_num(&r, "flood_accepted_per_s", rate, 1);
	if (st->ok_latency)
		report_hist(&r, "flood_ok", st->ok_latency, 0);
	report_num(&r, "relay_cpu_pct", u->relay_cpu_pct, 1);
	report_int(&r, "relay_rss_peak_kb", (int64_t)u->rss_peak_kb);
	report_num(&r, "loadgen_cpu_pct", u->self_cpu_pct, 1);
	report_num(&r, "other_cpu_pct", u->other_cpu_pct, 1);
	report_num(&r, "steal_pct", u->steal_pct, 1);
	report_end(&r);
}

static int bystander_go(const struct bystander_opts *o, const struct ws_url *url,
			struct usage_meter *meter)
{
	struct probe p = { .url = url, .interval_ms = o->interval_ms,
			   .max_s = o->baseline + o->duration + o->timeout + 10 };
	struct ingest_stats st;
	struct countflood_stats cst = { 0 };
	struct usage_report u;
	int rc;

	if (probe_start(&p)) {
		fprintf(stderr, "loadgen bystander: cannot start the probe\n");
		probe_free(&p);
		return 1;
	}
	if (!probe_wait_open(&p, 5)) {
		fprintf(stderr, "loadgen bystander: the probe could not connect\n");
		probe_join(&p);
		probe_free(&p);
		return 1;
	}
	clock_sleep_ns((uint64_t)(o->baseline * 1e9));
	usage_start(meter);
	probe_set_phase(&p, 1);
	rc = bystander_load(o, url, meter, &st, &cst);
	probe_join(&p);
	usage_finish(meter, &u);
	if (!rc)
		bystander_report(o, &p, &st, &cst, &u);
	ingest_stats_free(&st);
	probe_free(&p);
	return rc;
}

int cmd_bystander(int argc, char **argv)
{
	struct bystander_opts o = { "ws://127.0.0.1:7777", "", "", 64, 16, 0, 10, 2, 10, 600,
				    0, 2, 10, 0 };
	const struct cli_opt opts[] = {
		{ "url", CLI_STR, &o.url, "relay (loopback only)" },
		{ "file", CLI_STR, &o.file, "flood with these events (empty: no flood, wait --duration)" },
		{ "conns", CLI_INT, &o.conns, "flood connections" },
		{ "window", CLI_INT, &o.window, "flood EVENTs in flight per connection" },
		{ "count", CLI_INT, &o.count, "flood only the first n events (0: all)" },
		{ "interval-ms", CLI_INT, &o.interval_ms, "milliseconds between probe REQs" },
		{ "baseline", CLI_DOUBLE, &o.baseline, "seconds of probing before the load" },
		{ "duration", CLI_DOUBLE, &o.duration, "seconds of probing without --file" },
		{ "timeout", CLI_DOUBLE, &o.timeout, "bound on the flood, seconds" },
		{ "count-flood", CLI_INT, &o.count_flood,
		  "instead of --file: this many connections send heavy COUNTs for --duration" },
		{ "count-window", CLI_INT, &o.count_window, "COUNTs in flight per flood connection" },
		{ "count-filters", CLI_INT, &o.count_filters, "filters per flood COUNT" },
		{ "count-fresh", CLI_INT, &o.count_fresh,
		  "1: every flood COUNT on a new connection (count-flood x count-window at once)" },
		{ "pids", CLI_STR, &o.pids, "relay pids to measure, comma-separated" },
	};
	int rc = cli_parse("Times a cheap REQ every few ms while the relay is flooded.", opts,
			   CLI_COUNT(opts), argc, argv);
	struct usage_meter meter;
	struct ws_url url;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (ws_url_parse(o.url, &url) || usage_parse_pids(&meter, o.pids) || o.conns < 1 ||
	    o.window < 1 || o.interval_ms < 1 || o.baseline < 0 || o.duration < 0 ||
	    o.count_flood < 0 || o.count_window < 1 || o.count_filters < 1 || o.count_fresh < 0 ||
	    o.count_fresh > 1) {
		fprintf(stderr, "loadgen bystander: bad --url (loopback only), --pids or counts\n");
		return 2;
	}
	fdlimit_raise(o.conns + o.count_flood * (o.count_fresh ? o.count_window : 1) + 64);
	return bystander_go(&o, &url, &meter);
}
