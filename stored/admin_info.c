/*
 * admin_info.c - the admin socket's reading commands: stats, workers, subs,
 * config and bans (see admin.h for the replies).
 */
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/hex.h"
#include "../common/jsonstr.h"
#include "../common/listencheck.h"
#include "admin_cmds.h"
#include "db.h"
#include "queue.h"
#include "turnqueue.h"
#include "stored.h"

/* Rates are averaged over about this many seconds. */
#define ADMIN_RATE_WINDOW 10.0
/* The subs listing: at most this many subscriptions, about this many bytes. */
#define ADMIN_MAX_SUBS 10000
#define ADMIN_MAX_SUB_BYTES (16u << 20)
#define ADMIN_MAX_BANS 10000

/* Monotonic seconds. */
static double admin_now(void)
{
	return (double)deadline_now_us() / 1e6;
}

void admin__sample(struct admin *a)
{
	double now = admin_now();

	if (now - a->sampled_at < 1.0)
		return;
	a->sampled_at = now;
	rate_add(&a->ingest, now, atomic_load(&a->s->stats.events_accepted));
	rate_add(&a->queries, now, atomic_load(&a->s->stats.queries));
}

static double admin_rate(const struct rate *r, uint64_t v)
{
	double per_second = rate_per_second(r, admin_now(), v, ADMIN_RATE_WINDOW);

	return (double)(int64_t)(per_second * 10 + 0.5) / 10; /* one decimal */
}

static cJSON *admin_worker(int w, const struct stored_worker_report *r, time_t now)
{
	cJSON *item = cJSON_CreateObject();

	cJSON_AddNumberToObject(item, ADMIN_F_WORKER, w);
	admin__add_u64(item, ADMIN_F_PID, r->pid);
	admin__add_u64(item, "started_at", r->started_at);
	admin__add_u64(item, ADMIN_F_UPTIME_SECONDS,
		       (uint64_t)now > r->started_at ? (uint64_t)now - r->started_at : 0);
	admin__add_u64(item, ADMIN_F_CONNECTIONS, r->connections);
	admin__add_u64(item, ADMIN_F_SUBSCRIPTIONS, r->subscriptions);
	admin__add_u64(item, ADMIN_F_MESSAGES_IN, r->messages_in);
	admin__add_u64(item, ADMIN_F_MESSAGES_OUT, r->messages_out);
	admin__add_u64(item, ADMIN_F_EVENTS_REJECTED, r->events_rejected);
	admin__add_u64(item, ADMIN_F_RATE_LIMITED, r->rate_limited);
	admin__add_u64(item, ADMIN_F_CONNS_REFUSED, r->conns_refused);
	admin__add_u64(item, ADMIN_F_LANE_REFUSED, r->lane_refused);
	admin__add_u64(item, ADMIN_F_READS_PAUSED, r->reads_paused);
	admin__add_u64(item, "requests_on_loop", r->requests_on_loop);
	admin__add_u64(item, ADMIN_F_DELIVER_GAPS, r->deliver_gaps);
	admin__add_u64(item, ADMIN_F_LISTENER_RESTARTS, r->listener_restarts);
	admin__add_u64(item, "unmasked_closed", r->unmasked_closed);
	admin__add_u64(item, ADMIN_F_STORE_TIMEOUTS, r->store_timeouts);
	admin__add_u64(item, ADMIN_F_TOO_BIG_CLOSED, r->too_big_closed);
	admin__add_u64(item, ADMIN_F_PINGS_SENT, r->pings_sent);
	admin__add_u64(item, ADMIN_F_PING_TIMEOUTS, r->ping_timeouts);
	return item;
}

static cJSON *admin_worker_list(struct stored *s)
{
	cJSON *list = cJSON_CreateArray();
	time_t now = time(NULL);

	pthread_mutex_lock(&s->workers_lock);
	for (int w = 0; w < STORED_MAX_WORKERS; w++)
		if (s->workers[w].present)
			cJSON_AddItemToArray(list, admin_worker(w, &s->workers[w], now));
	pthread_mutex_unlock(&s->workers_lock);
	return list;
}

static cJSON *admin_rejects(struct stored_stats *st)
{
	static const char *const names[STORED_NREJECTS] = {
		[STORED_REJECT_DUPLICATE] = "duplicate",
		[STORED_REJECT_BLOCKED] = "blocked",
		[STORED_REJECT_ERROR] = "error",
		[STORED_REJECT_OTHER] = "other",
	};
	cJSON *o = cJSON_CreateObject();

	for (int i = 0; i < STORED_NREJECTS; i++)
		admin__add_u64(o, names[i], atomic_load(&st->rejects[i]));
	return o;
}

/* The write-policy plugin's counters (plugin.h; all 0 without one). */
static cJSON *admin_plugin(struct stored_plugin_stats *st)
{
	cJSON *o = cJSON_CreateObject();

	admin__add_u64(o, "accepted", atomic_load(&st->accepted));
	admin__add_u64(o, "rejected", atomic_load(&st->rejected));
	admin__add_u64(o, "shadow_rejected", atomic_load(&st->shadow_rejected));
	admin__add_u64(o, "timeouts", atomic_load(&st->timeouts));
	admin__add_u64(o, "failures", atomic_load(&st->failures));
	admin__add_u64(o, "restarts", atomic_load(&st->restarts));
	admin__add_u64(o, "fail_open", atomic_load(&st->fail_open));
	admin__add_u64(o, "queue_full", atomic_load(&st->queue_full));
	return o;
}

/* The query pool's queue (stored/turnqueue.h): what waits, what runs, and
 * the connections it holds to the threads not kept for cheap ones. */
static void admin_query_pool(cJSON *o, struct turnqueue *q)
{
	size_t heavy, cheap;

	admin__add_u64(o, "query_queue", turnqueue_length(q));
	admin__add_u64(o, "query_queue_senders", turnqueue_senders(q));
	admin__add_u64(o, "query_running", turnqueue_running(q));
	turnqueue_marked_senders(q, &heavy, &cheap);
	admin__add_u64(o, "query_running_capped", turnqueue_running_held(q));
	admin__add_u64(o, "query_heavy_conns", heavy);
	admin__add_u64(o, "query_cheap_conns", cheap);
	admin__add_u64(o, "query_conns_tracked", turnqueue_slots(q));
	admin__add_u64(o, "query_heavy_jobs", turnqueue_heavy_items(q));
}

cJSON *admin__stats(struct admin *a, const cJSON *req)
{
	struct stored *s = a->s;
	struct stored_stats *st = &s->stats;
	cJSON *o = cJSON_CreateObject();
	char wal[sizeof(s->db_path) + 8], search_wal[sizeof(s->search_path) + 8];
	uint64_t events = 0;
	cJSON *workers = admin_worker_list(s);

	db_count_events(a->db, &events);
	snprintf(wal, sizeof(wal), "%s-wal", s->db_path);
	snprintf(search_wal, sizeof(search_wal), "%s-wal", s->search_path);
	admin__add_u64(o, "events", events);
	admin__add_u64(o, "db_bytes", admin__file_size(s->db_path));
	admin__add_u64(o, "wal_bytes", admin__file_size(wal));
	/* NIP-50's index (search.db and its WAL; 0 with search = 0). */
	admin__add_u64(o, "search_db_bytes",
		       admin__file_size(s->search_path) + admin__file_size(search_wal));
	admin__add_u64(o, "uptime_seconds", (uint64_t)(time(NULL) - a->started));
	cJSON_AddNumberToObject(o, "ingest_rate",
				admin_rate(&a->ingest, atomic_load(&st->events_accepted)));
	cJSON_AddNumberToObject(o, "query_rate", admin_rate(&a->queries, atomic_load(&st->queries)));
	admin__add_u64(o, "workers_connected", (uint64_t)cJSON_GetArraySize(workers));
	admin__add_u64(o, "subscriptions", atomic_load(&st->subscriptions));
	admin__add_u64(o, "events_accepted", atomic_load(&st->events_accepted));
	admin__add_u64(o, "events_duplicate", atomic_load(&st->events_duplicate));
	admin__add_u64(o, "events_failed", atomic_load(&st->events_rejected));
	admin__add_u64(o, "ephemeral_delivered", atomic_load(&st->ephemeral_delivered));
	admin__add_u64(o, "queries", atomic_load(&st->queries));
	admin__add_u64(o, "deliveries", atomic_load(&st->deliveries));
	admin__add_u64(o, "deliver_replays", atomic_load(&st->replays));
	admin__add_u64(o, "commits", atomic_load(&st->commits));
	admin__add_u64(o, "bad_requests", atomic_load(&st->rpc_bad));
	admin__add_u64(o, "replies_dropped", atomic_load(&st->replies_dropped));
	admin__add_u64(o, "listener_restarts", listencheck_relistens(s->listencheck));
	admin__add_u64(o, "storage_full", atomic_load(&s->disk.full));
	admin__add_u64(o, "storage_full_refusals", atomic_load(&s->disk.refused));
	admin__add_u64(o, "disk_free_bytes", atomic_load(&s->disk.free_bytes));
	admin__add_u64(o, "write_queue", queue_length(s->write_q));
	admin__add_u64(o, "search_index_lag", (uint64_t)search_watermark_lag(&s->search));
	admin__add_u64(o, "broadcast_queue", queue_length(s->bcast_q));
	admin_query_pool(o, s->query_q);
	cJSON_AddItemToObject(o, "rejects", admin_rejects(st));
	cJSON_AddItemToObject(o, "plugin", admin_plugin(&st->plugin));
	cJSON_AddItemToObject(o, ADMIN_F_WORKER_LIST, workers);
	return o;
}

cJSON *admin__workers(struct admin *a, const cJSON *req)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, ADMIN_F_WORKER_LIST, admin_worker_list(a->s));
	return o;
}

/* ---- subs ---- */

static int admin_sub_order(const void *x, const void *y)
{
	const struct admin_sub *a = x, *b = y;
	uint32_t n = a->sub_id_len < b->sub_id_len ? a->sub_id_len : b->sub_id_len;
	int c;

	if (a->worker != b->worker)
		return a->worker < b->worker ? -1 : 1;
	if (a->conn_id != b->conn_id)
		return a->conn_id < b->conn_id ? -1 : 1;
	c = memcmp(a->sub_id, b->sub_id, n);
	return c ? c : (int)a->sub_id_len - (int)b->sub_id_len;
}

/* {"worker":..,"conn_id":..,"sub_id":"..","serial":..,"filters":[..]} as
 * text: the id and the filters keep every byte (jsonstr, filter_to_json). */
static int admin_sub_json(const struct admin_sub *sub, struct buf *out)
{
	int rc = buf_append_str(out, "{\"worker\":") || buf_append_int(out, sub->worker) ||
		 buf_append_str(out, ",\"conn_id\":") ||
		 buf_append_int(out, (int64_t)sub->conn_id) ||
		 buf_append_str(out, ",\"sub_id\":") ||
		 jsonstr_append_wire(out, sub->sub_id, sub->sub_id_len) ||
		 buf_append_str(out, ",\"serial\":") || buf_append_int(out, sub->serial) ||
		 buf_append_str(out, ",\"filters\":[");

	for (uint32_t i = 0; i < sub->nfilters && !rc; i++)
		rc = (i && buf_append_byte(out, ',')) || filter_to_json(&sub->filters[i], out);
	return rc || buf_append_str(out, "]}") ? ERR_NOMEM : 0;
}

static cJSON *admin_subs_reply(struct admin_job *job)
{
	cJSON *o = cJSON_CreateObject(), *list = cJSON_CreateArray();
	struct buf text = BUF_INIT;

	qsort(job->subs, job->nsubs, sizeof(*job->subs), admin_sub_order);
	for (uint32_t i = 0; i < job->nsubs; i++) {
		buf_reset(&text);
		if (admin_sub_json(&job->subs[i], &text) == 0)
			cJSON_AddItemToArray(list, cJSON_CreateRaw(text.data));
	}
	buf_free(&text);
	admin__add_u64(o, ADMIN_F_TOTAL, job->total_subs);
	admin__add_u64(o, ADMIN_F_LISTED, job->nsubs);
	cJSON_AddBoolToObject(o, ADMIN_F_TRUNCATED, job->truncated);
	cJSON_AddItemToObject(o, ADMIN_F_SUBSCRIPTIONS, list);
	return o;
}

cJSON *admin__subs(struct admin *a, const cJSON *req)
{
	const cJSON *max = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_MAX);
	struct admin_job *job = admin_job_new(ADMIN_OP_LIST_SUBS, 1, 0);
	cJSON *reply;
	int rc;

	if (!job)
		return admin__error("out of memory");
	job->max_subs = ADMIN_MAX_SUBS;
	if (cJSON_IsNumber(max) && max->valuedouble >= 0 && max->valuedouble < ADMIN_MAX_SUBS)
		job->max_subs = (uint32_t)max->valuedouble;
	job->max_sub_bytes = ADMIN_MAX_SUB_BYTES;
	rc = admin__run(a, job, 0);
	reply = rc || job->rc ? admin__job_error("subs", rc ? rc : job->rc) : admin_subs_reply(job);
	admin_job_release(job);
	return reply;
}

/* ---- config ---- */

static int admin_config_entry(void *arg, const struct config_entry *e)
{
	if (e->is_text)
		cJSON_AddStringToObject(arg, e->name, e->text);
	else
		cJSON_AddNumberToObject(arg, e->name, (double)e->number);
	return 0;
}

cJSON *admin__config(struct admin *a, const cJSON *req)
{
	cJSON *o = cJSON_CreateObject(), *cfg = cJSON_CreateObject();

	config_foreach(&a->s->cfg, admin_config_entry, cfg);
	cJSON_AddItemToObject(o, ADMIN_F_CONFIG, cfg);
	return o;
}

/* ---- bans ---- */

static cJSON *admin_ban_item(sqlite3_stmt *st)
{
	cJSON *item = cJSON_CreateObject();
	char hex[65] = "";

	if (sqlite3_column_bytes(st, 0) == 32)
		hex_encode(sqlite3_column_blob(st, 0), 32, hex);
	cJSON_AddStringToObject(item, ADMIN_F_PUBKEY, hex);
	cJSON_AddStringToObject(item, ADMIN_F_REASON, (const char *)sqlite3_column_text(st, 1));
	cJSON_AddNumberToObject(item, ADMIN_F_CREATED_AT, (double)sqlite3_column_int64(st, 2));
	return item;
}

cJSON *admin__bans(struct admin *a, const cJSON *req)
{
	static const char sql[] = "SELECT pubkey, reason, created_at FROM banned_pubkeys"
				  " ORDER BY created_at, pubkey";
	cJSON *o, *list;
	sqlite3_stmt *st;
	uint64_t n = 0;
	int rc;

	if (sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) != SQLITE_OK)
		return admin__error("bans: %s", sqlite3_errmsg(a->db));
	o = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(o, ADMIN_F_BANS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (n++ < ADMIN_MAX_BANS)
			cJSON_AddItemToArray(list, admin_ban_item(st));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		cJSON_Delete(o);
		return admin__error("bans: %s", sqlite3_errmsg(a->db));
	}
	admin__add_u64(o, ADMIN_F_TOTAL, n);
	cJSON_AddBoolToObject(o, ADMIN_F_TRUNCATED, n > ADMIN_MAX_BANS);
	return o;
}
