/*
 * maint.h - the operator's jobs the writer carries out on its connection
 * (the only one that writes): checkpoint, vacuum, ban, unban and delete by
 * filter.  Each runs between two batches of events, outside any
 * transaction, and fills the admin_job's outputs (jobs.h).
 *
 *   CHECKPOINT  PRAGMA wal_checkpoint(TRUNCATE); values: busy (1 if a reader
 *               kept it from completing), then SQLite's WAL frame counts
 *               (both 0 once a TRUNCATE completed: the WAL is empty).
 *   VACUUM      VACUUM, then a TRUNCATE checkpoint so the file shrinks now
 *               (in WAL mode the rebuilt pages land in the WAL first).
 *   BAN         adds pubkey to banned_pubkeys (or updates its reason);
 *               values[0]: 1 if it was not banned before.  Stored events of
 *               that pubkey are kept.
 *   UNBAN       removes it; values[0]: 1 if it was banned.
 *   DELETE      deletes the events matching any of the filters, the same
 *               events the count statement counts (query_sql.h), with
 *               their index rows; values[0]: how many.  No tombstone: the
 *               events may be published again.
 */
#ifndef STORED_MAINT_H
#define STORED_MAINT_H

#include <sqlite3.h>

struct admin_job;

/* Carries out job (any op but IMPORT and LIST_SUBS) on db and sets
 * job->rc (0 or ERR_DB / ERR_NOMEM / ERR_INVAL) and job->values. */
void maint_run(sqlite3 *db, struct admin_job *job);

#endif
