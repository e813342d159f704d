/* maint.c - operator jobs on the writer's connection (see maint.h). */
#include "maint.h"

#include <time.h>

#include "../common/err.h"
#include "../common/log.h"
#include "jobs.h"
#include "query_sql.h"

/* Steps st to the end, keeping the first row's first columns in values;
 * finalizes it.  Returns 0 or ERR_DB. */
static int maint_step(sqlite3 *db, sqlite3_stmt *st, int64_t *values, int nvalues)
{
	int rc, row = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; !row && i < nvalues && i < sqlite3_column_count(st); i++)
			values[i] = sqlite3_column_int64(st, i);
		row = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_warnx("admin job: %s", sqlite3_errmsg(db));
		return ERR_DB;
	}
	return 0;
}

static int maint_sql(sqlite3 *db, const char *sql, int64_t *values, int nvalues)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_warnx("admin job: %s: %s", sql, sqlite3_errmsg(db));
		return ERR_DB;
	}
	return maint_step(db, st, values, nvalues);
}

static int maint_checkpoint(sqlite3 *db, struct admin_job *job)
{
	/* main: this connection's own file (search.db is its indexer's). */
	return maint_sql(db, "PRAGMA main.wal_checkpoint(TRUNCATE)", job->values, 3);
}

static int maint_vacuum(sqlite3 *db, struct admin_job *job)
{
	log_info("admin: vacuum started");
	if (maint_sql(db, "VACUUM", NULL, 0))
		return ERR_DB;
	log_info("admin: vacuum done");
	return maint_checkpoint(db, job);
}

/* Runs sql with ?1 the job's pubkey (and ?2 its reason, ?3 its time). */
static int maint_pubkey(sqlite3 *db, struct admin_job *job, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ERR_DB;
	sqlite3_bind_blob(st, 1, job->pubkey, sizeof(job->pubkey), SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_text(st, 2, job->reason, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, job->now);
	if (maint_step(db, st, NULL, 0))
		return ERR_DB;
	job->values[0] = sqlite3_changes(db);
	return 0;
}

static int maint_ban(sqlite3 *db, struct admin_job *job)
{
	if (maint_pubkey(db, job, "INSERT INTO banned_pubkeys(pubkey, reason, created_at)"
				  " VALUES(?1, ?2, ?3) ON CONFLICT DO NOTHING"))
		return ERR_DB;
	if (job->values[0])
		return 0;
	/* Already banned: the new reason replaces the old; values[0] stays 0. */
	if (maint_pubkey(db, job, "UPDATE banned_pubkeys SET reason = ?2 WHERE pubkey = ?1"))
		return ERR_DB;
	job->values[0] = 0;
	return 0;
}

static int maint_unban(sqlite3 *db, struct admin_job *job)
{
	return maint_pubkey(db, job, "DELETE FROM banned_pubkeys WHERE pubkey = ?1");
}

static int maint_delete(sqlite3 *db, struct admin_job *job)
{
	struct query_scope scope = { 0, INT64_MAX, (int64_t)time(NULL), 0, true, false, NULL, 0, NULL, 0 };
	sqlite3_stmt *st;
	int rc = query_sql_prepare_delete(db, job->filters, job->nfilters, &scope, &st);

	if (rc)
		return rc;
	if (maint_step(db, st, NULL, 0))
		return ERR_DB;
	job->values[0] = sqlite3_changes(db);
	log_info("admin: deleted %lld events", (long long)job->values[0]);
	return 0;
}

/* NIP-86 changes: up to two statements each, with ?1 the pubkey or event
 * id, ?2 the reason or value, ?3 now or the kind, ?4 the address or key. */
static const char *const maint_manage_sql[MANAGE_COUNT][2] = {
	[MANAGE_ALLOW_PUBKEY] = { "INSERT INTO allowed_pubkeys(pubkey, reason, created_at)"
				  " VALUES(?1, ?2, ?3) ON CONFLICT DO UPDATE SET reason = ?2" },
	[MANAGE_UNALLOW_PUBKEY] = { "DELETE FROM allowed_pubkeys WHERE pubkey = ?1" },
	[MANAGE_BAN_EVENT] = { "INSERT INTO banned_events(id, reason, created_at)"
			       " VALUES(?1, ?2, ?3) ON CONFLICT DO UPDATE SET reason = ?2",
			       "DELETE FROM events WHERE id = ?1" },
	[MANAGE_ALLOW_EVENT] = { "DELETE FROM banned_events WHERE id = ?1" },
	[MANAGE_ALLOW_KIND] = { "INSERT OR IGNORE INTO allowed_kinds(kind) VALUES(?3)" },
	[MANAGE_DISALLOW_KIND] = { "DELETE FROM allowed_kinds WHERE kind = ?3" },
	[MANAGE_BLOCK_IP] = { "INSERT INTO blocked_ips(ip, reason, created_at)"
			      " VALUES(?4, ?2, ?3) ON CONFLICT DO UPDATE SET reason = ?2" },
	[MANAGE_UNBLOCK_IP] = { "DELETE FROM blocked_ips WHERE ip = ?4" },
	[MANAGE_SET_INFO] = { "INSERT INTO relay_info(key, value) VALUES(?4, ?2)"
			      " ON CONFLICT DO UPDATE SET value = ?2" },
};

/* Binds the parameters a statement names (an unnamed one would be an error). */
static void maint_manage_bind(sqlite3_stmt *st, const struct admin_job *job)
{
	int n = sqlite3_bind_parameter_count(st);

	if (n >= 1)
		sqlite3_bind_blob(st, 1, job->pubkey, 32, SQLITE_STATIC);
	if (n >= 2)
		sqlite3_bind_text(st, 2, job->reason, -1, SQLITE_STATIC);
	if (n >= 3)
		sqlite3_bind_int64(st, 3, job->now);
	if (n >= 4)
		sqlite3_bind_text(st, 4, job->text2, -1, SQLITE_STATIC);
}

static int maint_manage(sqlite3 *db, struct admin_job *job)
{
	if ((unsigned)job->manage >= MANAGE_COUNT)
		return ERR_INVAL;
	job->values[0] = 0;
	for (int i = 0; i < 2 && maint_manage_sql[job->manage][i]; i++) {
		sqlite3_stmt *st;
		int rc;

		if (sqlite3_prepare_v2(db, maint_manage_sql[job->manage][i], -1, &st, NULL) != SQLITE_OK)
			return ERR_DB;
		maint_manage_bind(st, job);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return ERR_DB;
		job->values[i] = sqlite3_changes(db);
	}
	return 0;
}

typedef int (*maint_fn)(sqlite3 *db, struct admin_job *job);

static const maint_fn maint_ops[] = {
	[ADMIN_OP_CHECKPOINT] = maint_checkpoint,
	[ADMIN_OP_VACUUM] = maint_vacuum,
	[ADMIN_OP_BAN] = maint_ban,
	[ADMIN_OP_UNBAN] = maint_unban,
	[ADMIN_OP_DELETE] = maint_delete,
	[ADMIN_OP_MANAGE] = maint_manage,
};

void maint_run(sqlite3 *db, struct admin_job *job)
{
	unsigned op = (unsigned)job->op;

	job->rc = op < sizeof(maint_ops) / sizeof(maint_ops[0]) && maint_ops[op]
			  ? maint_ops[op](db, job)
			  : ERR_INVAL;
}
