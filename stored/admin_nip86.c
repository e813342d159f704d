/*
 * admin_nip86.c - the NIP-86 relay management methods, as the admin
 * command "nip86" (admin_cmds.h).
 *
 * A worker forwards an authorized HTTP request here (rpc.c); an operator can
 * send the same through the admin socket: {"cmd": "nip86", "request":
 * {"method": ..., "params": [...]}}.  The reply is the JSON-RPC response,
 * {"result": ...} or {"error": "..."}.  Changes run as writer jobs
 * (maint.c), lists read the admin's connection; stored publishes the relay
 * texts and blocked addresses to the workers (metrics.c) within a second.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/err.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "../common/log.h"
#include "admin_cmds.h"
#include "stored.h"

struct nip86_method {
	const char *name;
	cJSON *(*fn)(struct admin *a, const struct nip86_method *m, const cJSON *params);
	enum admin_op op;        /* for changes */
	enum manage_stmt manage; /* for ADMIN_OP_MANAGE */
	const char *sql;         /* for lists */
};

static cJSON *nip86_error(const char *message)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, ADMIN_F_ERROR, message);
	return o;
}

static cJSON *nip86_result(cJSON *value)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, ADMIN_F_RESULT, value);
	return o;
}

static const char *nip86_string(const cJSON *params, int i)
{
	const cJSON *p = cJSON_GetArrayItem(params, i);

	return cJSON_IsString(p) && strlen(p->valuestring) < 256 ? p->valuestring : NULL;
}

/* Runs a prepared job on the writer and answers true, or the error. */
static cJSON *nip86_run(struct admin *a, struct admin_job *job)
{
	int rc = job ? admin__run(a, job, 1) : ERR_NOMEM;
	cJSON *reply;

	if (rc == 0)
		rc = job->rc;
	reply = rc ? nip86_error(err_name(rc)) : nip86_result(cJSON_CreateTrue());
	admin_job_release(job);
	return reply;
}

/* [hex key or id, reason?] */
static cJSON *nip86_key(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	const char *key = nip86_string(params, 0), *reason = nip86_string(params, 1);
	struct admin_job *job;

	if (!key || strlen(key) != 64)
		return nip86_error("the first parameter must be 64 lowercase hex characters");
	job = admin_job_new(m->op, 1, 0);
	if (job && hex_decode(key, 64, job->pubkey, 32)) {
		admin_job_release(job);
		return nip86_error("the first parameter must be 64 lowercase hex characters");
	}
	if (job) {
		job->manage = m->manage;
		job->now = (int64_t)time(NULL);
		snprintf(job->reason, sizeof(job->reason), "%s", reason ? reason : "");
	}
	return nip86_run(a, job);
}

/* [kind] */
static cJSON *nip86_kind(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	const cJSON *kind = cJSON_GetArrayItem(params, 0);
	struct admin_job *job;

	if (!cJSON_IsNumber(kind) || kind->valuedouble < 0 || kind->valuedouble > 65535 ||
	    kind->valuedouble != (double)(int)kind->valuedouble)
		return nip86_error("the kind must be an integer from 0 to 65535");
	job = admin_job_new(ADMIN_OP_MANAGE, 1, 0);
	if (job) {
		job->manage = m->manage;
		job->now = (int64_t)kind->valuedouble;
	}
	return nip86_run(a, job);
}

/* [ip, reason?] */
static cJSON *nip86_ip(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	const char *ip = nip86_string(params, 0), *reason = nip86_string(params, 1);
	unsigned char addr[16];
	struct admin_job *job;

	if (!ip || (inet_pton(AF_INET, ip, addr) != 1 && inet_pton(AF_INET6, ip, addr) != 1))
		return nip86_error("the first parameter must be an IPv4 or IPv6 address");
	job = admin_job_new(ADMIN_OP_MANAGE, 1, 0);
	if (job) {
		job->manage = m->manage;
		job->now = (int64_t)time(NULL);
		snprintf(job->text2, sizeof(job->text2), "%s", ip);
		snprintf(job->reason, sizeof(job->reason), "%s", reason ? reason : "");
	}
	return nip86_run(a, job);
}

/* [text] for changerelayname/description/icon; m->sql holds the key. */
static cJSON *nip86_info(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	const char *text = nip86_string(params, 0);
	struct admin_job *job;

	if (!text)
		return nip86_error("the parameter must be a string shorter than 256 bytes");
	job = admin_job_new(ADMIN_OP_MANAGE, 1, 0);
	if (job) {
		job->manage = MANAGE_SET_INFO;
		snprintf(job->text2, sizeof(job->text2), "%s", m->sql);
		snprintf(job->reason, sizeof(job->reason), "%s", text);
	}
	return nip86_run(a, job);
}

/* One row of a list as JSON: a blob column as hex, text as is, integers. */
static cJSON *nip86_row(sqlite3_stmt *st, const char *const *names)
{
	cJSON *o = cJSON_CreateObject();
	char hex[65];

	for (int i = 0; names[i]; i++) {
		int type = sqlite3_column_type(st, i);

		if (type == SQLITE_BLOB && sqlite3_column_bytes(st, i) == 32) {
			hex_encode(sqlite3_column_blob(st, i), 32, hex);
			cJSON_AddStringToObject(o, names[i], hex);
		} else if (type == SQLITE_INTEGER) {
			cJSON_AddNumberToObject(o, names[i], (double)sqlite3_column_int64(st, i));
		} else {
			cJSON_AddStringToObject(o, names[i], (const char *)sqlite3_column_text(st, i));
		}
	}
	return o;
}

static cJSON *nip86_list(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	static const char *const pk[] = { "pubkey", "reason", NULL };
	static const char *const id[] = { "id", "reason", NULL };
	static const char *const ip[] = { "ip", "reason", NULL };
	const char *const *names = strstr(m->sql, "banned_events") ? id
				   : strstr(m->sql, "blocked_ips") ? ip : pk;
	cJSON *list = cJSON_CreateArray();
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(a->db, m->sql, -1, &st, NULL) != SQLITE_OK) {
		cJSON_Delete(list);
		return nip86_error("the list could not be read");
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (strstr(m->sql, "allowed_kinds"))
			cJSON_AddItemToArray(list, cJSON_CreateNumber(sqlite3_column_int(st, 0)));
		else
			cJSON_AddItemToArray(list, nip86_row(st, names));
	}
	sqlite3_finalize(st);
	return nip86_result(list);
}

static cJSON *nip86_stats(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	return nip86_result(admin__stats(a, NULL));
}

static cJSON *nip86_supported(struct admin *a, const struct nip86_method *m, const cJSON *params);

static const struct nip86_method nip86_methods[] = {
	{ "supportedmethods", nip86_supported, 0, 0, NULL },
	{ "banpubkey", nip86_key, ADMIN_OP_BAN, 0, NULL },
	{ "unbanpubkey", nip86_key, ADMIN_OP_UNBAN, 0, NULL },
	{ "listbannedpubkeys", nip86_list, 0, 0,
	  "SELECT pubkey, reason FROM banned_pubkeys ORDER BY created_at" },
	{ "allowpubkey", nip86_key, ADMIN_OP_MANAGE, MANAGE_ALLOW_PUBKEY, NULL },
	{ "unallowpubkey", nip86_key, ADMIN_OP_MANAGE, MANAGE_UNALLOW_PUBKEY, NULL },
	{ "listallowedpubkeys", nip86_list, 0, 0,
	  "SELECT pubkey, reason FROM allowed_pubkeys ORDER BY created_at" },
	{ "banevent", nip86_key, ADMIN_OP_MANAGE, MANAGE_BAN_EVENT, NULL },
	{ "allowevent", nip86_key, ADMIN_OP_MANAGE, MANAGE_ALLOW_EVENT, NULL },
	{ "listbannedevents", nip86_list, 0, 0,
	  "SELECT id, reason FROM banned_events ORDER BY created_at" },
	{ "allowkind", nip86_kind, 0, MANAGE_ALLOW_KIND, NULL },
	{ "disallowkind", nip86_kind, 0, MANAGE_DISALLOW_KIND, NULL },
	{ "listallowedkinds", nip86_list, 0, 0, "SELECT kind FROM allowed_kinds ORDER BY kind" },
	{ "blockip", nip86_ip, 0, MANAGE_BLOCK_IP, NULL },
	{ "unblockip", nip86_ip, 0, MANAGE_UNBLOCK_IP, NULL },
	{ "listblockedips", nip86_list, 0, 0,
	  "SELECT ip, reason FROM blocked_ips ORDER BY created_at" },
	{ "changerelayname", nip86_info, 0, 0, "name" },
	{ "changerelaydescription", nip86_info, 0, 0, "description" },
	{ "changerelayicon", nip86_info, 0, 0, "icon" },
	{ "stats", nip86_stats, 0, 0, NULL },
};

#define NIP86_NMETHODS (sizeof(nip86_methods) / sizeof(nip86_methods[0]))

static cJSON *nip86_supported(struct admin *a, const struct nip86_method *m, const cJSON *params)
{
	cJSON *list = cJSON_CreateArray();

	for (size_t i = 0; i < NIP86_NMETHODS; i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(nip86_methods[i].name));
	return nip86_result(list);
}

/* The request: an object, or its JSON text as a string (workers send the
 * HTTP body as it came). */
static cJSON *nip86_request(const cJSON *req, cJSON **owned)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_REQUEST);

	*owned = NULL;
	if (cJSON_IsString(r))
		return *owned = json_parse(r->valuestring, strlen(r->valuestring), false);
	return (cJSON *)r;
}

cJSON *admin__nip86(struct admin *a, const cJSON *req)
{
	cJSON *owned, *request = nip86_request(req, &owned);
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(request, ADMIN_F_METHOD);
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(request, ADMIN_F_PARAMS);
	cJSON *reply = NULL;

	if (!cJSON_IsString(method))
		reply = nip86_error("the request needs a method");
	for (size_t i = 0; !reply && i < NIP86_NMETHODS; i++) {
		if (strcmp(method->valuestring, nip86_methods[i].name) == 0) {
			reply = nip86_methods[i].fn(a, &nip86_methods[i], params);
			log_info("nip86: %s", method->valuestring);
		}
	}
	if (!reply)
		reply = nip86_error("unsupported method");
	cJSON_Delete(owned);
	return reply;
}
