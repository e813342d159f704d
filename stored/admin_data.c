/*
 * admin_data.c - the admin socket's event transfer: export (pages of the
 * stored events matching a filter, in seq order) and import (events
 * validated here, then ingested by the writer under the same rules as
 * events from clients).  See admin.h for the requests and replies.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/err.h"
#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/log.h"
#include "admin_cmds.h"
#include "ingest.h"
#include "plugin.h"
#include "plugin_wire.h"
#include "query.h"
#include "query_sql.h"
#include "queue.h"
#include "stored.h"

/* An export page holds at most this many events and about this many bytes
 * (under nng's default 1 MiB receive limit, whatever the client). */
#define ADMIN_PAGE_ROWS 1000
#define ADMIN_PAGE_ROWS_MAX 10000
#define ADMIN_PAGE_BYTES (1048576 - 8192)
/* Events in one import request. */
#define ADMIN_IMPORT_MAX 10000
/* results[].outcome of an event refused here, before the writer. */
#define ADMIN_INVALID (-1)

/* ---- export ---- */

static int64_t admin_number(const cJSON *req, const char *name, int64_t def, int64_t lo,
			    int64_t hi)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, name);

	if (!cJSON_IsNumber(v) || v->valuedouble < (double)lo || v->valuedouble > (double)hi)
		return def;
	return (int64_t)v->valuedouble;
}

/* Fills events with one page; returns whether more may follow, or -1. */
static int admin_export_page(struct admin *a, const struct filter *fs, uint32_t n,
			     struct query_scope *scope, cJSON *events)
{
	size_t bytes = 0, rows = 0;
	int more = 0, rc;
	sqlite3_stmt *st;

	if (query_sql_prepare_export(a->db, fs, n, scope, &st))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *json = (const char *)sqlite3_column_text(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);

		if (rows && bytes + len + 1 > ADMIN_PAGE_BYTES) {
			more = 1;
			break;
		}
		cJSON_AddItemToArray(events, cJSON_CreateRaw(json));
		scope->min_seq = sqlite3_column_int64(st, 0);
		bytes += len + 1;
		rows++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -1;
	return more || rows == scope->limit;
}

cJSON *admin__export(struct admin *a, const cJSON *req)
{
	struct query_scope scope = { 0, INT64_MAX, (int64_t)time(NULL), ADMIN_PAGE_ROWS, true, false,
				     NULL, 0, NULL, 0 };
	struct filter *fs, all;
	uint32_t n;
	char why[256];
	cJSON *reply, *events;
	int more;

	if (admin__filters(req, &fs, &n, why, sizeof(why)))
		return admin__error("export: %s", why);
	if (query_searches(a->s, fs, n))
		search_watermark_await(&a->s->search, 0, (int)a->s->cfg.query_time_limit_ms);
	filter_init(&all);
	scope.min_seq = admin_number(req, ADMIN_F_AFTER, 0, 0, INT64_MAX / 2);
	scope.limit =
		(uint32_t)admin_number(req, ADMIN_F_LIMIT, ADMIN_PAGE_ROWS, 1, ADMIN_PAGE_ROWS_MAX);
	reply = cJSON_CreateObject();
	events = cJSON_CreateArray();
	more = admin_export_page(a, n ? fs : &all, n ? n : 1, &scope, events);
	filters_free(fs, n);
	if (more < 0) {
		cJSON_Delete(events);
		cJSON_Delete(reply);
		return admin__error("export: the query failed: %s", sqlite3_errmsg(a->db));
	}
	cJSON_AddNumberToObject(reply, ADMIN_F_LAST, (double)scope.min_seq);
	cJSON_AddBoolToObject(reply, ADMIN_F_MORE, more);
	cJSON_AddItemToObject(reply, ADMIN_F_EVENTS, events);
	return reply;
}

/* ---- import ---- */

/* NIP-62: does this kind 62 name this relay (or every relay)?  Compares
 * relay_url as written, ignoring one trailing slash. */
static bool admin_vanish_here(const struct stored *s, const cJSON *obj)
{
	const cJSON *tag;
	size_t mine = strlen(s->cfg.relay_url);

	if (mine && s->cfg.relay_url[mine - 1] == '/')
		mine--;
	cJSON_ArrayForEach(tag, cJSON_GetObjectItemCaseSensitive(obj, "tags")) {
		const cJSON *name = cJSON_GetArrayItem(tag, 0), *value = cJSON_GetArrayItem(tag, 1);
		size_t len;

		if (!cJSON_IsString(name) || strcmp(name->valuestring, "relay") ||
		    !cJSON_IsString(value))
			continue;
		len = strlen(value->valuestring);
		if (len && value->valuestring[len - 1] == '/')
			len--;
		if (strcmp(value->valuestring, "ALL_RELAYS") == 0 ||
		    (mine && len == mine && memcmp(value->valuestring, s->cfg.relay_url, len) == 0))
			return true;
	}
	return false;
}

/* Validates obj as relayd would (structure, id, class, expiry) and, unless
 * verified, its signature.  Returns 0 with *ev filled, or ERR_INVAL with
 * a reason in why. */
static int admin_import_check(struct admin *a, const cJSON *obj, bool verified,
			      struct event *ev, char *why, size_t why_len)
{
	const char *bad = NULL;

	if (!cJSON_IsObject(obj)) {
		snprintf(why, why_len, "invalid: not a JSON object");
		return ERR_INVAL;
	}
	if (event_parse(obj, NULL, ev, why, why_len))
		return ERR_INVAL;
	if (!verified && sig_verify_event(a->verifier, ev))
		bad = "invalid: bad signature";
	else if (event_class_of(ev->kind) == EVENT_EPHEMERAL)
		bad = "invalid: ephemeral events are not stored";
	else if (ev->expiration && ev->expiration <= (int64_t)time(NULL))
		bad = "invalid: this event has expired";
	if (bad) {
		snprintf(why, why_len, "%s", bad);
		event_free(ev);
		return ERR_INVAL;
	}
	if (ev->kind == 62 && admin_vanish_here(a->s, obj))
		ev->flags |= EVENT_FLAG_VANISH_HERE;
	return 0;
}

/*
 * The one way an imported event goes to the writer: validated, it is
 * ingested under the usual rules (replaceable versions, deletions, bans,
 * policy), its outcome going to job->results[i].  The event moves; on
 * failure the piece is finished here, its result left "not processed".
 */
static void admin_import_to_writer(struct admin *a, struct admin_job *job, uint32_t i,
				   struct event *ev, enum plugin_source source)
{
	struct write_job *w = calloc(1, sizeof(*w));

	if (!w) {
		event_free(ev);
		admin_job_done(job);
		return;
	}
	admin_job_hold(job);
	w->admin = job;
	w->admin_index = i;
	w->event = *ev;
	w->source = (uint8_t)source;
	w->received_at = (int64_t)time(NULL);
	if (a->s->plugin ? plugin_submit(a->s->plugin, w) : queue_push(a->s->write_q, w))
		write_job_free(w); /* done and released; the result stays "not processed" */
}

/* Checks and queues every event; invalid ones get their reason in why[i]. */
static void admin_import_submit(struct admin *a, struct admin_job *job, const cJSON *events,
				bool verified, enum plugin_source source, char **why)
{
	const cJSON *obj = events->child;
	char reason[256];

	for (uint32_t i = 0; i < job->nresults; i++, obj = obj->next) {
		struct event ev;

		if (admin_import_check(a, obj, verified, &ev, reason, sizeof(reason))) {
			job->results[i].outcome = ADMIN_INVALID;
			why[i] = strdup(reason);
			admin_job_done(job);
			continue;
		}
		admin_import_to_writer(a, job, i, &ev, source);
	}
}

static void admin_problem(cJSON *problems, uint32_t i, const char *message)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddNumberToObject(p, ADMIN_F_INDEX, i);
	cJSON_AddStringToObject(p, ADMIN_F_MESSAGE, message ? message : "invalid");
	cJSON_AddItemToArray(problems, p);
}

static cJSON *admin_import_reply(const struct admin_job *job, char **why)
{
	/* stored, duplicate, superseded, refused or failed, invalid */
	uint64_t count[5] = { 0 };
	cJSON *reply = cJSON_CreateObject(), *problems = cJSON_CreateArray();

	for (uint32_t i = 0; i < job->nresults; i++) {
		const struct admin_result *r = &job->results[i];

		if (r->outcome == INGEST_STORED) {
			count[0]++;
		} else if (r->outcome == INGEST_DUPLICATE) {
			count[1]++;
		} else if (r->outcome == INGEST_SUPERSEDED) {
			count[2]++;
		} else {
			count[r->outcome == ADMIN_INVALID ? 4 : 3]++;
			admin_problem(problems, i,
				      r->outcome == ADMIN_INVALID ? why[i] : r->message);
		}
	}
	admin__add_u64(reply, ADMIN_F_STORED, count[0]);
	admin__add_u64(reply, ADMIN_F_DUPLICATE, count[1]);
	admin__add_u64(reply, ADMIN_F_SUPERSEDED, count[2]);
	admin__add_u64(reply, ADMIN_F_REFUSED, count[3]);
	admin__add_u64(reply, ADMIN_F_INVALID, count[4]);
	cJSON_AddItemToObject(reply, ADMIN_F_PROBLEMS, problems);
	return reply;
}

/* The plugin's sourceType for an import's "source" field. */
static int admin_import_source(const cJSON *req, enum plugin_source *out)
{
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_SOURCE);

	*out = PLUGIN_SOURCE_IMPORT;
	if (!src)
		return 0;
	if (cJSON_IsString(src) && !strcmp(src->valuestring, "sync"))
		*out = PLUGIN_SOURCE_SYNC;
	else if (cJSON_IsString(src) && !strcmp(src->valuestring, "stream"))
		*out = PLUGIN_SOURCE_STREAM;
	else
		return -1;
	return 0;
}

cJSON *admin__import(struct admin *a, const cJSON *req)
{
	enum plugin_source source;
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_EVENTS);
	bool verified = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_VERIFIED));
	int n = cJSON_GetArraySize(events);
	struct admin_job *job;
	char **why;
	cJSON *reply;
	int rc;

	if (!cJSON_IsArray(events) || n < 1 || n > ADMIN_IMPORT_MAX)
		return admin__error("import needs \"events\": an array of 1 to %d events",
				    ADMIN_IMPORT_MAX);
	if (admin_import_source(req, &source))
		return admin__error("import's \"source\" is \"sync\" or \"stream\"");
	job = admin_job_new(ADMIN_OP_IMPORT, (uint32_t)n, INGEST_FAILED);
	why = calloc((size_t)n, sizeof(*why));
	if (!job || !why) {
		admin_job_release(job);
		free(why);
		return admin__error("out of memory");
	}
	admin_import_submit(a, job, events, verified, source, why);
	rc = admin_job_wait(job, ADMIN_WAIT_MS);
	reply = rc ? admin__job_error("import", rc) : admin_import_reply(job, why);
	for (int i = 0; i < n; i++)
		free(why[i]);
	free(why);
	admin_job_release(job);
	return reply;
}
