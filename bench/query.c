/*
 * query.c - `loadgen query`: on one connection, one REQ at a time, a mix of
 * filters by author, kind, #e, #p and ids, with and without limit, built from
 * the events of the file the database was loaded with; times each REQ to
 * its EOSE (and CLOSEs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "evfile.h"
#include "procstat.h"
#include "relay_msg.h"
#include "report.h"
#include "rng.h"
#include "stats.h"
#include "../common/ws_client.h"

#define Q_SAMPLE 20000 /* events of the file the filters are drawn from */
#define Q_GIVE_UP_NS (10 * NS_PER_S) /* a REQ without EOSE by then is lost */

typedef char hex64[65];

/* Values to query by, drawn from the file. */
struct qpool {
	hex64 *v;
	size_t n;
};

struct qindex {
	struct qpool authors, ids, etags, ptags;
};

struct qopts {
	const char *url, *file, *pids, *only;
	long count, warmup, limit, seed;
	double duration;
	long deflate;
};

struct qrun;
typedef int (*qbuild_fn)(struct qrun *q, char *out, size_t cap);

struct qrun {
	const struct qopts *o;
	struct qindex ix;
	struct rng rng;
	struct ws_conn *ws;
	bool open, gone;
	uint64_t seq, sent_ns, events_now, events_total;
	int kind_now;
	bool waiting;
	int only; /* the one class asked (--class), or -1 for the mix */
	uint64_t done, closed, lost;
	uint64_t wire_in0, wire_in; /* bytes read when timing began, and in all */
	struct hist *all, *per_kind[8];
};

static const char *qpick(struct qrun *q, const struct qpool *p)
{
	return p->n ? p->v[rng_below(&q->rng, (uint32_t)p->n)] : "";
}

static int q_author_limit(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"authors\":[\"%s\"],\"limit\":%ld}", qpick(q, &q->ix.authors),
			q->o->limit);
}

static int q_author_all(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"authors\":[\"%s\"]}", qpick(q, &q->ix.authors));
}

static int q_kind_limit(struct qrun *q, char *out, size_t cap)
{
	static const int kinds[] = { 0, 1, 3, 7 };

	return snprintf(out, cap, "{\"kinds\":[%d],\"limit\":%ld}", kinds[rng_below(&q->rng, 4)],
			q->o->limit);
}

static int q_e_limit(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"#e\":[\"%s\"],\"limit\":%ld}", qpick(q, &q->ix.etags),
			q->o->limit);
}

static int q_e_all(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"#e\":[\"%s\"]}", qpick(q, &q->ix.etags));
}

static int q_p_limit(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"#p\":[\"%s\"],\"limit\":%ld}", qpick(q, &q->ix.ptags),
			q->o->limit);
}

static int q_ids(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"ids\":[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]}",
			qpick(q, &q->ix.ids), qpick(q, &q->ix.ids), qpick(q, &q->ix.ids),
			qpick(q, &q->ix.ids), qpick(q, &q->ix.ids));
}

static int q_author_kind(struct qrun *q, char *out, size_t cap)
{
	return snprintf(out, cap, "{\"authors\":[\"%s\"],\"kinds\":[1],\"limit\":%ld}",
			qpick(q, &q->ix.authors), q->o->limit);
}

static const struct {
	const char *name;
	qbuild_fn build;
} qkinds[8] = {
	{ "author_limit", q_author_limit }, { "author_nolimit", q_author_all },
	{ "kind_limit", q_kind_limit },     { "e_limit", q_e_limit },
	{ "e_nolimit", q_e_all },           { "p_limit", q_p_limit },
	{ "ids5", q_ids },                  { "author_kind_limit", q_author_kind },
};

static void qpool_add(struct qpool *p, const char *v)
{
	if (v && strlen(v) == 64)
		memcpy(p->v[p->n++], v, 65);
}

/* The first value of the first tag named name, or NULL. */
static const char *qtag(const cJSON *tags, const char *name)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, tags) {
		const cJSON *n = cJSON_GetArrayItem(t, 0), *v = cJSON_GetArrayItem(t, 1);

		if (cJSON_IsString(n) && !strcmp(n->valuestring, name) && cJSON_IsString(v))
			return v->valuestring;
	}
	return NULL;
}

static void qindex_one(struct qindex *ix, const struct evline *l)
{
	cJSON *o = json_parse(l->json, l->len, false);
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(o, "tags");

	qpool_add(&ix->authors, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "pubkey")));
	qpool_add(&ix->ids, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "id")));
	qpool_add(&ix->etags, qtag(tags, "e"));
	qpool_add(&ix->ptags, qtag(tags, "p"));
	cJSON_Delete(o);
}

static int qindex_build(struct qindex *ix, const struct evfile *f)
{
	size_t n = f->count < Q_SAMPLE ? f->count : Q_SAMPLE, stride = f->count / (n ? n : 1);
	struct qpool *pools[4] = { &ix->authors, &ix->ids, &ix->etags, &ix->ptags };

	for (int i = 0; i < 4; i++) {
		pools[i]->v = calloc(n ? n : 1, sizeof(hex64));
		if (!pools[i]->v)
			return -1;
	}
	for (size_t i = 0; i < n; i++)
		qindex_one(ix, &f->lines[i * stride]);
	return ix->authors.n && ix->ids.n && ix->etags.n && ix->ptags.n ? 0 : -1;
}

static void qindex_free(struct qindex *ix)
{
	free(ix->authors.v);
	free(ix->ids.v);
	free(ix->etags.v);
	free(ix->ptags.v);
}

static void q_send(struct qrun *q)
{
	char filter[512], req[600];
	int n;

	q->kind_now = q->only >= 0 ? q->only : (int)rng_below(&q->rng, 8);
	qkinds[q->kind_now].build(q, filter, sizeof(filter));
	n = snprintf(req, sizeof(req), "[\"REQ\",\"q%llu\",%s]", (unsigned long long)q->seq, filter);
	q->events_now = 0;
	q->waiting = true;
	q->sent_ns = clock_ns();
	ws_send_text(q->ws, req, (size_t)n);
	ws_flush(q->ws);
}

/* The current REQ ended: EOSE, CLOSED, or given up (recorded as lost with
 * the time it waited, a lower bound). */
static void q_end(struct qrun *q, bool eose, bool lost)
{
	uint64_t lat = clock_ns() - q->sent_ns;
	char close[48];
	int n = snprintf(close, sizeof(close), "[\"CLOSE\",\"q%llu\"]", (unsigned long long)q->seq);

	q->waiting = false;
	q->seq++;
	if (!eose && !lost) {
		q->closed++;
		return;
	}
	ws_send_text(q->ws, close, (size_t)n);
	q->lost += lost;
	if (q->seq <= (uint64_t)q->o->warmup)
		return;
	hist_record(q->all, lat);
	hist_record(q->per_kind[q->kind_now], lat);
	q->events_total += q->events_now;
	q->done++;
}

static void q_on_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct qrun *q = ud;
	struct relay_msg m;
	char sub[24];
	int n = snprintf(sub, sizeof(sub), "q%llu", (unsigned long long)q->seq);

	(void)ws;
	if (relay_msg_scan(data, len, &m) || !q->waiting || m.arg_len != (size_t)n ||
	    memcmp(m.arg, sub, (size_t)n))
		return;
	if (m.type == RMSG_EVENT)
		q->events_now++;
	else if (m.type == RMSG_EOSE || m.type == RMSG_CLOSED)
		q_end(q, m.type == RMSG_EOSE, false);
}

static void q_on_open(struct ws_conn *ws, void *ud)
{
	(void)ws;
	((struct qrun *)ud)->open = true;
}

static void q_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct qrun *q = ud;

	(void)ws;
	(void)err;
	q->ws = NULL;
	q->gone = true;
}

static const struct ws_handlers q_handlers = { q_on_open, q_on_message, q_on_close };

static void q_report(struct qrun *q, double secs, const struct usage_report *u)
{
	struct report r;
	char key[64];

	printf("query: %llu queries in %.2f s = %.0f/s, p50 %.3f ms p99 %.3f ms, %.1f events each\n",
	       (unsigned long long)q->done, secs, secs > 0 ? (double)q->done / secs : 0,
	       hist_percentile(q->all, 50) / 1e6, hist_percentile(q->all, 99) / 1e6,
	       q->done ? (double)q->events_total / (double)q->done : 0);
	report_begin(&r, "query");
	report_int(&r, "queries", (int64_t)q->done);
	report_int(&r, "closed", (int64_t)q->closed);
	report_int(&r, "lost", (int64_t)q->lost);
	report_num(&r, "queries_per_s", secs > 0 ? (double)q->done / secs : 0, 1);
	report_num(&r, "events_per_query", q->done ? (double)q->events_total / (double)q->done : 0, 1);
	report_hist(&r, "eose", q->all, 1);
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "%s_p50_ms", qkinds[i].name);
		report_ms(&r, key, hist_percentile(q->per_kind[i], 50));
		snprintf(key, sizeof(key), "%s_p99_ms", qkinds[i].name);
		report_ms(&r, key, hist_percentile(q->per_kind[i], 99));
	}
	report_num(&r, "relay_cpu_pct", u->relay_cpu_pct, 1);
	report_num(&r, "loadgen_cpu_pct", u->self_cpu_pct, 1);
	report_num(&r, "other_cpu_pct", u->other_cpu_pct, 1);
	report_num(&r, "steal_pct", u->steal_pct, 1);
	report_int(&r, "deflate", q->o->deflate);
	report_num(&r, "wire_bytes_per_query", q->done ? (double)q->wire_in / (double)q->done : 0, 1);
	report_end(&r);
}

/* Sends REQs one after another until count, duration, or the connection ends. */
static void q_loop(struct qrun *q, struct ws_loop *loop, double *secs)
{
	uint64_t t0 = 0, end = clock_ns() + (uint64_t)(q->o->duration * 1e9);
	uint64_t total = (uint64_t)(q->o->count + q->o->warmup);

	for (uint64_t open_end = clock_ns() + 5 * NS_PER_S; !q->open && !q->gone &&
							   clock_ns() < open_end;)
		ws_loop_poll(loop, 10000);
	while (q->open && !q->gone && q->seq < total && clock_ns() < end) {
		if (!q->waiting) {
			if (q->seq == (uint64_t)q->o->warmup) {
				t0 = clock_ns();
				q->wire_in0 = ws_loop_bytes_in(loop);
			}
			q_send(q);
		} else if (clock_ns() - q->sent_ns > Q_GIVE_UP_NS) {
			q_end(q, false, true);
			continue;
		}
		ws_loop_poll(loop, 100000);
	}
	*secs = t0 ? (double)(clock_ns() - t0) / 1e9 : 0;
	q->wire_in = ws_loop_bytes_in(loop) - q->wire_in0;
}

static int q_go(struct qrun *q, const struct ws_url *url, struct usage_meter *meter)
{
	struct ws_loop *loop = ws_loop_new(64u << 20);
	struct usage_report u = { 0 };
	double secs = 0;

	q->all = hist_new();
	for (int i = 0; i < 8; i++)
		q->per_kind[i] = hist_new();
	if (loop && q->o->deflate)
		ws_loop_offer_deflate(loop);
	q->ws = loop ? ws_connect(loop, url, &q_handlers, q) : NULL;
	if (q->ws) {
		usage_start(meter);
		q_loop(q, loop, &secs);
		usage_finish(meter, &u);
	}
	if (q->open)
		q_report(q, secs, &u);
	else
		fprintf(stderr, "loadgen query: could not connect\n");
	ws_loop_free(loop);
	hist_free(q->all);
	for (int i = 0; i < 8; i++)
		hist_free(q->per_kind[i]);
	return q->open ? 0 : 1;
}

int cmd_query(int argc, char **argv)
{
	struct qopts o = { "ws://127.0.0.1:7777", "events.jsonl", "", "", 2000, 100, 50, 1, 120, 0 };
	const struct cli_opt opts[] = {
		{ "url", CLI_STR, &o.url, "relay (loopback only)" },
		{ "file", CLI_STR, &o.file, "the events the database was loaded with" },
		{ "count", CLI_INT, &o.count, "queries to time" },
		{ "warmup", CLI_INT, &o.warmup, "queries sent first and not timed" },
		{ "limit", CLI_INT, &o.limit, "limit of the filters that have one" },
		{ "duration", CLI_DOUBLE, &o.duration, "bound on the run, seconds" },
		{ "seed", CLI_INT, &o.seed, "seed of the query mix" },
		{ "pids", CLI_STR, &o.pids, "relay pids to measure, comma-separated" },
		{ "deflate", CLI_INT, &o.deflate, "1: offer permessage-deflate" },
		{ "class", CLI_STR, &o.only, "only this class of the mix (author_nolimit, ...)" },
	};
	int rc = cli_parse("Times REQs to EOSE on a loaded database.", opts, CLI_COUNT(opts), argc,
			   argv);
	struct qrun q = { .o = &o, .only = -1 };
	struct usage_meter meter;
	struct evfile ev;
	struct ws_url url;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (ws_url_parse(o.url, &url) || usage_parse_pids(&meter, o.pids) || o.count < 1 ||
	    o.warmup < 0 || o.limit < 1) {
		fprintf(stderr, "loadgen query: bad --url (loopback only), --pids or counts\n");
		return 2;
	}
	for (int i = 0; o.only[0] && i < 8; i++)
		if (strcmp(o.only, qkinds[i].name) == 0)
			q.only = i;
	if (o.only[0] && q.only < 0) {
		fprintf(stderr, "loadgen query: no class %s\n", o.only);
		return 2;
	}
	if (evfile_load(o.file, &ev)) {
		fprintf(stderr, "loadgen query: cannot load %s\n", o.file);
		return 1;
	}
	rc = qindex_build(&q.ix, &ev);
	evfile_free(&ev);
	if (rc) {
		fprintf(stderr, "loadgen query: %s lacks authors, ids, e or p tags\n", o.file);
		qindex_free(&q.ix);
		return 1;
	}
	rng_seed(&q.rng, (uint64_t)o.seed);
	rc = q_go(&q, &url, &meter);
	qindex_free(&q.ix);
	return rc;
}
