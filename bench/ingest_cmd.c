/*
 * ingest_cmd.c - `loadgen ingest`: publishes a JSONL file through the
 * engine of ingest.h and reports accepted/s, OK latency, and what the relay
 * (--pids) and this process spent doing it.
 */
#include <stdio.h>

#include "../common/err.h"
#include "cli.h"
#include "cmds.h"
#include "evfile.h"
#include "ingest.h"
#include "procstat.h"
#include "report.h"
#include "stats.h"
#include "../common/ws_client.h"

struct ingest_opts {
	const char *url, *file, *pids, *acked;
	long count, conns, window, timeline;
	double timeout;
	long deflate;
};

/* One line per second: what was answered in it and the slowest OK. */
static void ingest_timeline(const struct ingest_stats *s)
{
	uint32_t last = (uint32_t)s->elapsed_s + 1;

	for (uint32_t i = 0; i <= last && i < s->nseconds; i++)
		printf("second %u: %u accepted, %u duplicate, %u rejected, slowest OK %.1f ms\n", i,
		       s->seconds[i].accepted, s->seconds[i].duplicate, s->seconds[i].rejected,
		       (double)s->seconds[i].max_ns / 1e6);
}

static void ingest_tick(void *arg)
{
	usage_sample(arg);
}

static void ingest_print(const struct ingest_opts *o, const struct ingest_stats *s,
			 const struct usage_report *u)
{
	double rate = s->elapsed_s > 0 ? (double)s->accepted / s->elapsed_s : 0;
	struct report r;

	printf("ingest: %d conns x %ld in flight: %llu sent, %llu accepted, %llu duplicate, "
	       "%llu rejected, %llu unanswered in %.2f s = %.0f accepted/s\n",
	       s->conns_opened, o->window, (unsigned long long)s->sent,
	       (unsigned long long)s->accepted, (unsigned long long)s->duplicate,
	       (unsigned long long)s->rejected, (unsigned long long)s->unanswered, s->elapsed_s, rate);
	if (s->rejected)
		printf("ingest: first rejection: %s\n", s->first_reject);
	report_begin(&r, "ingest");
	report_int(&r, "conns", o->conns);
	report_int(&r, "window", o->window);
	report_int(&r, "sent", (int64_t)s->sent);
	report_int(&r, "accepted", (int64_t)s->accepted);
	report_int(&r, "duplicate", (int64_t)s->duplicate);
	report_int(&r, "rejected", (int64_t)s->rejected);
	report_int(&r, "unanswered", (int64_t)s->unanswered);
	report_int(&r, "conns_failed", s->conns_failed);
	report_int(&r, "conns_lost", s->conns_lost);
	report_num(&r, "elapsed_s", s->elapsed_s, 3);
	report_num(&r, "accepted_per_s", rate, 1);
	report_hist(&r, "ok", s->ok_latency, 1);
	report_num(&r, "relay_cpu_pct", u->relay_cpu_pct, 1);
	report_int(&r, "relay_rss_kb", (int64_t)u->rss_kb);
	report_int(&r, "relay_rss_peak_kb", (int64_t)u->rss_peak_kb);
	report_num(&r, "loadgen_cpu_pct", u->self_cpu_pct, 1);
	report_num(&r, "other_cpu_pct", u->other_cpu_pct, 1);
	report_num(&r, "steal_pct", u->steal_pct, 1);
	report_int(&r, "deflate", o->deflate);
	report_num(&r, "wire_out_bytes_per_event", s->sent ? (double)s->wire_out / (double)s->sent : 0, 1);
	report_end(&r);
}

static int ingest_go(const struct ingest_opts *o, const struct ws_url *url,
		     struct usage_meter *meter)
{
	struct evfile ev;
	struct ingest_stats st;
	struct usage_report u;
	struct ingest_cfg cfg;
	FILE *acked = NULL;

	if (evfile_load(o->file, &ev)) {
		fprintf(stderr, "loadgen ingest: cannot load %s\n", o->file);
		return 1;
	}
	if (o->acked[0] && !(acked = fopen(o->acked, "w"))) {
		perror(o->acked);
		evfile_free(&ev);
		return 1;
	}
	cfg = (struct ingest_cfg){ url, &ev, o->count > 0 && (size_t)o->count < ev.count
						     ? (uint64_t)o->count : ev.count,
				   (int)o->conns, (int)o->window, o->timeout, acked, ingest_tick, meter,
				   (int)o->deflate };
	usage_start(meter);
	if (ingest_run(&cfg, &st)) {
		evfile_free(&ev);
		if (acked)
			fclose(acked);
		fprintf(stderr, "loadgen ingest: out of memory\n");
		return 1;
	}
	if (acked && fclose(acked)) {
		perror(o->acked);
		ingest_stats_free(&st);
		evfile_free(&ev);
		return 1;
	}
	usage_finish(meter, &u);
	if (o->timeline)
		ingest_timeline(&st);
	ingest_print(o, &st, &u);
	ingest_stats_free(&st);
	evfile_free(&ev);
	return 0;
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_opts o = { "ws://127.0.0.1:7777", "events.jsonl", "", "", 0, 1, 16, 0, 600, 0 };
	const struct cli_opt opts[] = {
		{ "url", CLI_STR, &o.url, "relay (loopback only)" },
		{ "file", CLI_STR, &o.file, "events, one JSON object a line (loadgen gen)" },
		{ "count", CLI_INT, &o.count, "publish only the first n events (0: all)" },
		{ "conns", CLI_INT, &o.conns, "connections" },
		{ "window", CLI_INT, &o.window, "EVENTs in flight per connection" },
		{ "deflate", CLI_INT, &o.deflate, "1: offer permessage-deflate (EVENTs go compressed)" },
		{ "timeout", CLI_DOUBLE, &o.timeout, "seconds before giving up" },
		{ "timeline", CLI_INT, &o.timeline, "1: print what each second answered" },
		{ "pids", CLI_STR, &o.pids, "relay pids to measure, comma-separated" },
		{ "acked", CLI_STR, &o.acked, "write the id of every OK true here (loadgen check)" },
	};
	int rc = cli_parse("Publishes a file and times the OKs.", opts, CLI_COUNT(opts), argc, argv);
	struct usage_meter meter;
	struct ws_url url;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (ws_url_parse(o.url, &url) || usage_parse_pids(&meter, o.pids) || o.conns < 1 ||
	    o.window < 1 || o.timeout <= 0) {
		fprintf(stderr, "loadgen ingest: bad --url (loopback only), --pids, --conns or --window\n");
		return 2;
	}
	fdlimit_raise(o.conns + 64);
	return ingest_go(&o, &url, &meter);
}
