/*
 * admin_write.c - the admin socket's commands that change the database:
 * checkpoint, vacuum, ban, unban and delete (see admin.h for the replies).
 * The writer thread carries them out (maint.h); this thread waits for it.
 * A dry-run delete only counts, on the admin's read connection.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/err.h"
#include "../common/hex.h"
#include "../common/log.h"
#include "admin_cmds.h"
#include "backup.h"
#include "query.h"
#include "query_sql.h"
#include "stored.h"

/* Runs a writer job of kind op; *reply is set to an error if it failed.
 * Returns the job (the caller releases it) or NULL after an error. */
static struct admin_job *admin_write(struct admin *a, struct admin_job *job, const char *what,
				     cJSON **reply)
{
	int rc;

	if (!job) {
		*reply = admin__error("out of memory");
		return NULL;
	}
	rc = admin__run(a, job, 1);
	if (rc || job->rc) {
		*reply = admin__job_error(what, rc ? rc : job->rc);
		admin_job_release(job);
		return NULL;
	}
	return job;
}

static uint64_t admin_wal_size(struct admin *a)
{
	char wal[sizeof(a->s->db_path) + 8];

	snprintf(wal, sizeof(wal), "%s-wal", a->s->db_path);
	return admin__file_size(wal);
}

static void admin_add_wal(struct admin *a, cJSON *o)
{
	admin__add_u64(o, ADMIN_F_DB_BYTES, admin__file_size(a->s->db_path));
	admin__add_u64(o, ADMIN_F_WAL_BYTES, admin_wal_size(a));
}

/* A TRUNCATE checkpoint waits for every reader, and a backup reads one
 * snapshot until its copy ends: the writer would wait out its busy timeout
 * (5 s) with every EVENT queued behind it. */
static cJSON *admin_refuse_during_backup(struct admin *a, const char *what)
{
	return backup_holds_wal(a->s->backup)
		       ? admin__error("a backup is running; %s once it has ended (relayctl backup)",
				      what)
		       : NULL;
}

cJSON *admin__checkpoint(struct admin *a, const cJSON *req)
{
	uint64_t before = admin_wal_size(a);
	cJSON *reply = admin_refuse_during_backup(a, "checkpoint");
	struct admin_job *job = reply ? NULL
				       : admin_write(a, admin_job_new(ADMIN_OP_CHECKPOINT, 1, 0),
						     "checkpoint", &reply);

	if (!job)
		return reply;
	reply = cJSON_CreateObject();
	cJSON_AddBoolToObject(reply, ADMIN_F_BUSY, job->values[0] != 0);
	admin__add_u64(reply, ADMIN_F_WAL_BYTES_BEFORE, before);
	admin_add_wal(a, reply);
	admin_job_release(job);
	return reply;
}

cJSON *admin__vacuum(struct admin *a, const cJSON *req)
{
	uint64_t before = admin__file_size(a->s->db_path);
	cJSON *reply = admin_refuse_during_backup(a, "vacuum");
	struct admin_job *job = reply ? NULL
				       : admin_write(a, admin_job_new(ADMIN_OP_VACUUM, 1, 0), "vacuum",
						     &reply);

	if (!job)
		return reply;
	reply = cJSON_CreateObject();
	admin__add_u64(reply, ADMIN_F_DB_BYTES_BEFORE, before);
	admin_add_wal(a, reply);
	cJSON_AddBoolToObject(reply, ADMIN_F_BUSY, job->values[0] != 0);
	admin_job_release(job);
	return reply;
}

/* The request's "pubkey" (64 lowercase hex) into out; 0 or ERR_INVAL. */
static int admin_pubkey(const cJSON *req, uint8_t out[32])
{
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_PUBKEY);

	if (!cJSON_IsString(pk) || strlen(pk->valuestring) != 64 ||
	    hex_decode(pk->valuestring, 64, out, 32))
		return ERR_INVAL;
	return 0;
}

/* BAN or UNBAN of the request's pubkey; values[0] says whether it changed. */
static cJSON *admin_ban_op(struct admin *a, const cJSON *req, enum admin_op op)
{
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_REASON);
	struct admin_job *job = admin_job_new(op, 1, 0);
	char hex[65];
	cJSON *reply = NULL;

	if (job && admin_pubkey(req, job->pubkey)) {
		admin_job_release(job);
		return admin__error("pubkey must be 64 lowercase hex characters");
	}
	if (job) {
		snprintf(job->reason, sizeof(job->reason), "%s",
			 cJSON_IsString(reason) ? reason->valuestring : "");
		job->now = (int64_t)time(NULL);
	}
	job = admin_write(a, job, op == ADMIN_OP_BAN ? "ban" : "unban", &reply);
	if (!job)
		return reply;
	hex_encode(job->pubkey, 32, hex);
	reply = cJSON_CreateObject();
	cJSON_AddStringToObject(reply, ADMIN_F_PUBKEY, hex);
	if (op == ADMIN_OP_BAN) {
		log_info("admin: banned %s", hex);
		cJSON_AddBoolToObject(reply, "banned", 1);
		cJSON_AddBoolToObject(reply, ADMIN_F_WAS_BANNED, job->values[0] == 0);
		cJSON_AddStringToObject(reply, "note", "events already stored are kept; "
				       "delete {\"authors\":[pubkey]} removes them");
	} else {
		log_info("admin: unbanned %s", hex);
		cJSON_AddBoolToObject(reply, ADMIN_F_UNBANNED, job->values[0] != 0);
	}
	admin_job_release(job);
	return reply;
}

cJSON *admin__ban(struct admin *a, const cJSON *req)
{
	return admin_ban_op(a, req, ADMIN_OP_BAN);
}

cJSON *admin__unban(struct admin *a, const cJSON *req)
{
	return admin_ban_op(a, req, ADMIN_OP_UNBAN);
}

/* The number of events matching the filters, on the read connection, with
 * the scope the writer's delete uses. */
static cJSON *admin_delete_count(struct admin *a, const struct filter *fs, uint32_t n)
{
	struct query_scope scope = { 0, INT64_MAX, (int64_t)time(NULL), 0, true, false, NULL, 0, NULL, 0 };
	sqlite3_stmt *st;
	cJSON *reply;
	int64_t count;

	if (query_searches(a->s, fs, n))
		search_watermark_await(&a->s->search, 0, (int)a->s->cfg.query_time_limit_ms);
	if (query_sql_prepare_count(a->db, fs, n, &scope, &st))
		return admin__error("delete: the count failed");
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return admin__error("delete: the count failed: %s", sqlite3_errmsg(a->db));
	}
	count = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	reply = cJSON_CreateObject();
	cJSON_AddBoolToObject(reply, ADMIN_F_DRY_RUN, 1);
	cJSON_AddNumberToObject(reply, ADMIN_F_MATCHED, (double)count);
	return reply;
}

cJSON *admin__delete(struct admin *a, const cJSON *req)
{
	struct filter *fs;
	struct admin_job *job;
	uint32_t n;
	char why[256];
	cJSON *reply = NULL;

	if (admin__filters(req, &fs, &n, why, sizeof(why)))
		return admin__error("delete: %s", why);
	if (n == 0)
		return admin__error("delete needs a filter, e.g. {\"authors\":[\"<hex>\"]}");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_DRY_RUN))) {
		reply = admin_delete_count(a, fs, n);
		filters_free(fs, n);
		return reply;
	}
	job = admin_job_new(ADMIN_OP_DELETE, 1, 0);
	if (!job) {
		filters_free(fs, n);
		return admin__error("out of memory");
	}
	job->filters = fs;
	job->nfilters = n;
	job = admin_write(a, job, "delete", &reply);
	if (!job)
		return reply;
	reply = cJSON_CreateObject();
	cJSON_AddNumberToObject(reply, ADMIN_F_DELETED, (double)job->values[0]);
	admin_job_release(job);
	return reply;
}
