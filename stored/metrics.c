/* metrics.c - rendering and publishing the relay-wide snapshot (see metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/buf.h"
#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/heaptrim.h"
#include "../common/histo.h"
#include "../common/listencheck.h"
#include "../common/log.h"
#include "../common/procstat.h"
#include "../common/version.h"
#include "../proto/msg.h"
#include "db.h"
#include "pub.h"
#include "queue.h"
#include "stored.h"
#include "turnqueue.h"

/* Counting rows is cheap but not free: refresh the gauge this often. */
#define METRICS_COUNT_EVERY 10

struct metrics {
	struct stored *s;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t stop_cond; /* metrics_stop: end the wait at once */
	bool stop;
	sqlite3 *db;
	uint64_t events;          /* last count of the events table */
	time_t counted_at;
	uint64_t last_accepted;   /* for events per second */
	time_t started;
	double events_per_second;
	struct buf text, json, out;
	struct heaptrim heaptrim; /* this thread's: stored's freed heap back to the system */
};

/* One line "name value" (or "name{worker=\"w\"} value") with HELP/TYPE
 * when help is not NULL. */
static void metrics_line(struct buf *b, const char *name, const char *type, const char *help,
			 int worker, double value)
{
	char line[320];

	if (help) {
		snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
		buf_append_str(b, line);
	}
	if (worker >= 0)
		snprintf(line, sizeof(line), "%s{worker=\"%d\"} %.0f\n", name, worker, value);
	else
		snprintf(line, sizeof(line), "%s %.0f\n", name, value);
	buf_append_str(b, line);
}

static uint64_t metrics_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The write-policy plugin's counters (plugin.h), by what happened. */
static void metrics_plugin(struct buf *b, struct stored_plugin_stats *st)
{
	const struct { const char *label; atomic_uint_fast64_t *value; } rows[] = {
		{ "accept", &st->accepted }, { "reject", &st->rejected },
		{ "shadow_reject", &st->shadow_rejected }, { "fail_open", &st->fail_open },
		{ "queue_full", &st->queue_full },
	};
	char line[128];

	buf_append_str(b, "# HELP relay_plugin_events_total Events the write-policy plugin judged,"
			  " by outcome.\n# TYPE relay_plugin_events_total counter\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(line, sizeof(line), "relay_plugin_events_total{outcome=\"%s\"} %llu\n",
			 rows[i].label, (unsigned long long)atomic_load(rows[i].value));
		buf_append_str(b, line);
	}
	metrics_line(b, "relay_plugin_timeouts_total", "counter",
		     "Write-policy plugin answers that did not come in time.", -1,
		     (double)atomic_load(&st->timeouts));
	metrics_line(b, "relay_plugin_failures_total", "counter",
		     "Write-policy plugin exits, timeouts and lines that were not answers.", -1,
		     (double)atomic_load(&st->failures));
	metrics_line(b, "relay_plugin_restarts_total", "counter",
		     "Write-policy plugin starts after the first.", -1,
		     (double)atomic_load(&st->restarts));
}

static void metrics_stored(struct metrics *m)
{
	struct stored_stats *st = &m->s->stats;
	char wal[sizeof(m->s->db_path) + 8], search_wal[sizeof(m->s->search_path) + 8];
	struct buf *b = &m->text;

	snprintf(wal, sizeof(wal), "%s-wal", m->s->db_path);
	snprintf(search_wal, sizeof(search_wal), "%s-wal", m->s->search_path);
	metrics_line(b, "relay_events_stored", "gauge", "Events in the database.", -1, (double)m->events);
	metrics_line(b, "relay_events_accepted_total", "counter", "Events stored on arrival.", -1,
		     (double)atomic_load(&st->events_accepted));
	metrics_line(b, "relay_events_duplicate_total", "counter",
		     "Events answered duplicate (or superseded).", -1,
		     (double)atomic_load(&st->events_duplicate));
	metrics_line(b, "relay_events_refused_total", "counter",
		     "Events refused by stored (deleted, vanished, failed).", -1,
		     (double)atomic_load(&st->events_rejected));
	metrics_line(b, "relay_ephemeral_events_total", "counter", "Ephemeral events relayed.", -1,
		     (double)atomic_load(&st->ephemeral_delivered));
	metrics_line(b, "relay_queries_total", "counter", "REQ histories and COUNTs answered.", -1,
		     (double)atomic_load(&st->queries));
	metrics_line(b, "relay_deliveries_total", "counter", "DELIVER messages published.", -1,
		     (double)atomic_load(&st->deliveries));
	metrics_line(b, "relay_deliver_replays_total", "counter",
		     "Subscriptions sent again the stored events their worker lost.", -1,
		     (double)atomic_load(&st->replays));
	metrics_line(b, "relay_commits_total", "counter", "Write transactions committed.", -1,
		     (double)atomic_load(&st->commits));
	metrics_line(b, "relay_replies_dropped_total", "counter",
		     "Replies to a worker that was gone or not reading.", -1,
		     (double)atomic_load(&st->replies_dropped));
	metrics_line(b, "relay_listener_restarts_total", "counter",
		     "stored's sockets listened on again after nng stopped taking connections.", -1,
		     (double)listencheck_relistens(m->s->listencheck));
	metrics_plugin(b, &st->plugin);
	metrics_line(b, "relay_subscriptions", "gauge", "Live subscriptions.", -1,
		     (double)atomic_load(&st->subscriptions));
	metrics_line(b, "relay_db_bytes", "gauge", "Size of the database file.", -1,
		     (double)metrics_file_size(m->s->db_path));
	metrics_line(b, "relay_wal_bytes", "gauge", "Size of the write-ahead log.", -1,
		     (double)metrics_file_size(wal));
	metrics_line(b, "relay_search_db_bytes", "gauge",
		     "Size of the full-text index file (search.db) and its write-ahead log.", -1,
		     (double)(metrics_file_size(m->s->search_path) + metrics_file_size(search_wal)));
	metrics_line(b, "relay_storage_full", "gauge",
		     "1 while free space is below disk_reserve_mb and new events are refused.", -1,
		     atomic_load(&m->s->disk.full) ? 1.0 : 0.0);
	metrics_line(b, "relay_storage_full_refusals_total", "counter",
		     "Events refused because free space was below disk_reserve_mb.", -1,
		     (double)atomic_load(&m->s->disk.refused));
	metrics_line(b, "relay_disk_free_bytes", "gauge",
		     "Free bytes on the data directory's file system at the last check.", -1,
		     (double)atomic_load(&m->s->disk.free_bytes));
	metrics_line(b, "relay_write_queue", "gauge", "Events waiting for the writer.", -1,
		     (double)queue_length(m->s->write_q));
	metrics_line(b, "relay_search_index_lag", "gauge",
		     "Events stored whose text the search index does not have yet.", -1,
		     (double)search_watermark_lag(&m->s->search));
}

/* The query pool (stored/turnqueue.h): what waits, what runs, and what it
 * holds to the threads not kept for connections known cheap. */
static void metrics_query_pool(struct metrics *m)
{
	struct turnqueue *q = m->s->query_q;
	struct buf *b = &m->text;
	size_t heavy, cheap;

	turnqueue_marked_senders(q, &heavy, &cheap);
	metrics_line(b, "relay_query_queue", "gauge",
		     "REQ histories, replays and COUNTs waiting for a query thread.", -1,
		     (double)turnqueue_length(q));
	metrics_line(b, "relay_query_running", "gauge", "Query jobs being run.", -1,
		     (double)turnqueue_running(q));
	metrics_line(b, "relay_query_running_capped", "gauge",
		     "Of those, jobs of connections not known cheap (heavy or new).", -1,
		     (double)turnqueue_running_held(q));
	metrics_line(b, "relay_query_heavy_connections", "gauge",
		     "Connections with a query of query_heavy_ms CPU or more in the last 60 s.", -1,
		     (double)heavy);
	metrics_line(b, "relay_query_heavy_jobs_total", "counter",
		     "Query jobs that cost query_heavy_ms of CPU or more.", -1,
		     (double)turnqueue_heavy_items(q));
}

struct metrics_field {
	const char *name, *type, *help;
	size_t offset; /* of a uint32_t or uint64_t in struct stored_worker_report */
	int is32;
};

#define WF(name, field, type, help, is32) \
	{ name, type, help, offsetof(struct stored_worker_report, field), is32 }

static const struct metrics_field metrics_worker_fields[] = {
	WF("relay_worker_connections", connections, "gauge", "Open websocket connections.", 1),
	WF("relay_worker_subscriptions", subscriptions, "gauge", "Open subscriptions.", 1),
	WF("relay_worker_messages_in_total", messages_in, "counter", "Client messages received.", 0),
	WF("relay_worker_messages_out_total", messages_out, "counter", "Frames sent to clients.", 0),
	WF("relay_worker_events_rejected_total", events_rejected, "counter",
	   "Events refused by the worker.", 0),
	WF("relay_worker_deliver_gaps_total", deliver_gaps, "counter",
	   "Live deliveries lost between stored and the worker.", 0),
	WF("relay_worker_rate_limited_total", rate_limited, "counter",
	   "Messages refused by the per-address rate limits.", 0),
	WF("relay_worker_connections_refused_total", conns_refused, "counter",
	   "Connections refused by max_connections_per_ip.", 0),
	WF("relay_worker_lane_refused_total", lane_refused, "counter",
	   "Messages refused because their ingress lane was full.", 0),
	WF("relay_worker_reads_paused_total", reads_paused, "counter",
	   "Times a connection was not read until its lane caught up (max_queued_messages).", 0),
	WF("relay_worker_requests_on_loop_total", requests_on_loop, "counter",
	   "Small REQ, CLOSE and COUNT messages parsed on the websocket loop (inline_request_bytes).",
	   0),
	WF("relay_worker_listener_restarts_total", listener_restarts, "counter",
	   "The worker's reply socket listened on again after it stopped taking connections.", 0),
	WF("relay_worker_unmasked_closed_total", unmasked_closed, "counter",
	   "Connections closed because the client sent an unmasked frame (RFC 6455).", 0),
	WF("relay_worker_store_timeouts_total", store_timeouts, "counter",
	   "EVENTs (store_timeout_ms), REQs and COUNTs (answer_timeout_ms) answered error: because"
	   " stored sent nothing for them in time.",
	   0),
	WF("relay_worker_too_big_closed_total", too_big_closed, "counter",
	   "Connections closed with 1009 because a message was over max_message_bytes.", 0),
	WF("relay_worker_pings_sent_total", pings_sent, "counter",
	   "Websocket pings sent to connections idle for ping_interval.", 0),
	WF("relay_worker_ping_timeouts_total", ping_timeouts, "counter",
	   "Connections closed because they answered no ping within a second ping_interval.", 0),
};

static double metrics_field_value(const struct stored_worker_report *w, const struct metrics_field *f)
{
	const char *p = (const char *)w + f->offset;
	uint32_t v32;
	uint64_t v64;

	if (f->is32) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return (double)v64;
}

/* Per-worker series, and the workers' OK latency summed. */
static void metrics_workers(struct metrics *m, struct histo *ok, uint32_t *workers, double *conns)
{
	struct stored *s = m->s;
	size_t nfields = sizeof(metrics_worker_fields) / sizeof(metrics_worker_fields[0]);

	pthread_mutex_lock(&s->workers_lock);
	for (size_t f = 0; f < nfields; f++) {
		const struct metrics_field *mf = &metrics_worker_fields[f];
		int first = 1;

		for (int w = 0; w < STORED_MAX_WORKERS; w++) {
			if (!s->workers[w].present)
				continue;
			metrics_line(&m->text, mf->name, mf->type, first ? mf->help : NULL, w,
				     metrics_field_value(&s->workers[w], mf));
			first = 0;
		}
	}
	for (int w = 0; w < STORED_MAX_WORKERS; w++) {
		if (!s->workers[w].present)
			continue;
		histo_add(ok, &s->workers[w].ok_latency);
		(*workers)++;
		*conns += s->workers[w].connections;
	}
	pthread_mutex_unlock(&s->workers_lock);
}

/* The standard process_* metrics, one field of struct procstat each; scale
 * turns the stored unit into the metric's (microseconds into seconds). */
static const struct metrics_proc_field {
	const char *name, *type, *help;
	size_t offset; /* of a uint64_t in struct procstat */
	double scale;
} metrics_proc_fields[] = {
	{ "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
	  offsetof(struct procstat, rss_bytes), 1 },
	{ "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
	  offsetof(struct procstat, cpu_us), 1e-6 },
	{ "process_open_fds", "gauge", "Number of open file descriptors.",
	  offsetof(struct procstat, open_fds), 1 },
	{ "process_max_fds", "gauge", "Maximum number of open file descriptors.",
	  offsetof(struct procstat, max_fds), 1 },
	{ "process_start_time_seconds", "gauge",
	  "Start time of the process since unix epoch in seconds.",
	  offsetof(struct procstat, start_time), 1 },
};

/* One process's series of f: stored's unlabelled (worker < 0), a
 * worker's with worker="N". */
static void metrics_proc_line(struct buf *b, const struct metrics_proc_field *f, int worker,
			      const struct procstat *p)
{
	char line[160], label[32] = "";
	uint64_t v;

	memcpy(&v, (const char *)p + f->offset, sizeof(v));
	if (worker >= 0)
		snprintf(label, sizeof(label), "{worker=\"%d\"}", worker);
	if (f->scale == 1)
		snprintf(line, sizeof(line), "%s%s %llu\n", f->name, label, (unsigned long long)v);
	else
		snprintf(line, sizeof(line), "%s%s %.6f\n", f->name, label, (double)v * f->scale);
	buf_append_str(b, line);
}

/* stored's own figures, then each worker's as it last reported them. */
static void metrics_processes(struct metrics *m)
{
	struct stored *s = m->s;
	struct procstat own;
	char head[320];

	procstat_read(&own);
	pthread_mutex_lock(&s->workers_lock);
	for (size_t i = 0; i < sizeof(metrics_proc_fields) / sizeof(metrics_proc_fields[0]); i++) {
		const struct metrics_proc_field *f = &metrics_proc_fields[i];

		snprintf(head, sizeof(head), "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
			 f->name, f->type);
		buf_append_str(&m->text, head);
		metrics_proc_line(&m->text, f, -1, &own);
		for (int w = 0; w < STORED_MAX_WORKERS; w++)
			if (s->workers[w].present)
				metrics_proc_line(&m->text, f, w, &s->workers[w].proc);
	}
	pthread_mutex_unlock(&s->workers_lock);
}

/* relay_build_info: stored's version and commit as labels, value 1. */
static void metrics_build_info(struct metrics *m)
{
	char line[256];

	snprintf(line, sizeof(line),
		 "# HELP relay_build_info The version and commit stored was built from.\n"
		 "# TYPE relay_build_info gauge\n"
		 "relay_build_info{version=\"%s\",commit=\"%s\"} 1\n",
		 RELAY_VERSION, version_commit());
	buf_append_str(&m->text, line);
}

static void metrics_histograms(struct metrics *m, const struct histo *ok)
{
	struct histo q = { 0 };

	for (int i = 0; i < HISTO_BUCKETS; i++) {
		q.counts[i] = atomic_load(&m->s->stats.query_latency[i]);
		q.count += q.counts[i];
	}
	q.sum_us = atomic_load(&m->s->stats.query_latency_sum_us);
	histo_render(&m->text, "relay_ok_latency_seconds",
		     "From an EVENT's arrival at a worker to its OK, for events stored answered.", ok);
	histo_render(&m->text, "relay_query_latency_seconds",
		     "Time stored spent answering a REQ history or a COUNT.", &q);
}

static void metrics_summary(struct metrics *m, uint32_t workers, double conns)
{
	char json[512];

	snprintf(json, sizeof(json),
		 "{\"connections\":%.0f,\"events_stored\":%llu,\"events_per_second\":%.1f,"
		 "\"subscriptions\":%llu,\"workers\":%u,\"uptime_seconds\":%lld}",
		 conns, (unsigned long long)m->events, m->events_per_second,
		 (unsigned long long)atomic_load(&m->s->stats.subscriptions), workers,
		 (long long)(time(NULL) - m->started));
	buf_append_str(&m->json, json);
}

static void metrics_refresh(struct metrics *m, time_t now)
{
	uint64_t accepted = atomic_load(&m->s->stats.events_accepted);

	m->events_per_second = (double)(accepted - m->last_accepted);
	m->last_accepted = accepted;
	if (now - m->counted_at >= METRICS_COUNT_EVERY) {
		db_count_events(m->db, &m->events);
		m->counted_at = now;
	}
}

static void metrics_publish(struct metrics *m)
{
	struct msg_header h = msg_header_for(MSG_WORKER_ALL, 0);
	struct histo ok = { 0 };
	uint32_t workers = 0;
	double conns = 0;

	metrics_refresh(m, time(NULL));
	buf_reset(&m->text);
	buf_reset(&m->json);
	buf_reset(&m->out);
	metrics_stored(m);
	metrics_query_pool(m);
	metrics_workers(m, &ok, &workers, &conns);
	metrics_line(&m->text, "relay_workers_connected", "gauge", "Workers connected to stored.", -1,
		     workers);
	metrics_histograms(m, &ok);
	metrics_processes(m);
	metrics_build_info(m);
	metrics_summary(m, workers, conns);
	struct msg_metrics body = { { m->text.data, (uint32_t)m->text.len },
				    { m->json.data, (uint32_t)m->json.len } };
	if (msg_encode_metrics(&m->out, &h, &body) == 0)
		pub_send(m->s, m->out.data, m->out.len);
}

/* A relay_info value ("" when unset), copied into out. */
static void metrics_info(struct metrics *m, const char *key, char *out, size_t len)
{
	sqlite3_stmt *st;

	out[0] = '\0';
	if (sqlite3_prepare_v2(m->db, "SELECT value FROM relay_info WHERE key = ?1", -1, &st, NULL))
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

/* Whether the table (allowed_pubkeys or allowed_kinds) has a row. */
static bool metrics_has_rows(struct metrics *m, const char *sql)
{
	sqlite3_stmt *st;
	bool rows = false;

	if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) == SQLITE_OK) {
		rows = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return rows;
}

/* NIP-86 state the workers act on or show: relay texts, blocked addresses,
 * and whether an allow list restricts writes (NIP-11 restricted_writes).
 * The buffers are static: only this thread publishes. */
static void metrics_publish_policy(struct metrics *m)
{
	static char name[256], description[256], icon[256], ips[MSG_POLICY_MAX_IPS][64];
	static struct msg_str views[MSG_POLICY_MAX_IPS];
	struct msg_header h = msg_header_for(MSG_WORKER_ALL, 0);
	struct msg_policy p = { .blocked_ips = views };
	sqlite3_stmt *st;

	metrics_info(m, "name", name, sizeof(name));
	metrics_info(m, "description", description, sizeof(description));
	metrics_info(m, "icon", icon, sizeof(icon));
	p.relay_name = (struct msg_str){ name, (uint32_t)strlen(name) };
	p.relay_description = (struct msg_str){ description, (uint32_t)strlen(description) };
	p.relay_icon = (struct msg_str){ icon, (uint32_t)strlen(icon) };
	if (sqlite3_prepare_v2(m->db, "SELECT ip FROM blocked_ips", -1, &st, NULL) == SQLITE_OK) {
		while (p.nblocked < MSG_POLICY_MAX_IPS && sqlite3_step(st) == SQLITE_ROW) {
			snprintf(ips[p.nblocked], sizeof(ips[0]), "%s", sqlite3_column_text(st, 0));
			views[p.nblocked] = (struct msg_str){ ips[p.nblocked],
							      (uint32_t)strlen(ips[p.nblocked]) };
			p.nblocked++;
		}
		sqlite3_finalize(st);
	}
	p.writes_restricted = metrics_has_rows(m, "SELECT 1 FROM allowed_pubkeys LIMIT 1") ||
			      metrics_has_rows(m, "SELECT 1 FROM allowed_kinds LIMIT 1");
	buf_reset(&m->out);
	if (msg_encode_policy(&m->out, &h, &p) == 0)
		pub_send(m->s, m->out.data, m->out.len);
}

/* Sleeps a second, or until metrics_stop; true if it is time to stop.
 * (It used to sleep in 100-ms slices to watch s->stopping: ten wake-ups a
 * second on an idle relay.) */
static bool metrics_sleep(struct metrics *m)
{
	struct timespec until;
	bool stop;

	deadline_after_ms(&until, CLOCK_MONOTONIC, 1000);
	pthread_mutex_lock(&m->lock);
	while (!m->stop && pthread_cond_timedwait(&m->stop_cond, &m->lock, &until) != ETIMEDOUT)
		;
	stop = m->stop;
	pthread_mutex_unlock(&m->lock);
	return stop;
}

static void *metrics_main(void *arg)
{
	struct metrics *m = arg;

	pthread_setname_np(pthread_self(), "metrics"); /* for top -H, perf */
	heaptrim_init(&m->heaptrim, m->s->cfg.heap_trim_interval);
	while (!metrics_sleep(m)) {
		metrics_publish(m);
		metrics_publish_policy(m);
		if (heaptrim_tick(&m->heaptrim, deadline_now_ms()))
			log_debug("heap trimmed in %lld us", (long long)m->heaptrim.last_us);
	}
	return NULL;
}

static void metrics_free(struct metrics *m)
{
	db_close(m->db);
	buf_free(&m->text);
	buf_free(&m->json);
	buf_free(&m->out);
	pthread_cond_destroy(&m->stop_cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int metrics_start(struct stored *s)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return ERR_NOMEM;
	m->s = s;
	m->started = time(NULL);
	m->last_accepted = atomic_load(&s->stats.events_accepted);
	if (pthread_mutex_init(&m->lock, NULL)) {
		free(m);
		return ERR_NOMEM;
	}
	if (deadline_cond_init(&m->stop_cond)) {
		pthread_mutex_destroy(&m->lock);
		free(m);
		return ERR_NOMEM;
	}
	if (db_open(s->db_path, false, NULL, &m->db) ||
	    pthread_create(&m->thread, NULL, metrics_main, m)) {
		metrics_free(m);
		return ERR_DB;
	}
	s->metrics = m;
	return 0;
}

void metrics_stop(struct stored *s)
{
	struct metrics *m = s->metrics;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->stop_cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	metrics_free(m);
	s->metrics = NULL;
}
