/* upgrade.c - bringing an older database up to date (see upgrade.h). */
#include "upgrade.h"

#include <stdint.h>
#include <stdio.h>

#include "../common/err.h"
#include "../common/log.h"
#include "../common/notify.h"
#include "sql.h"
#include "tagval.h"

/* Version 0 to 1: packs the hex tag values, one rowid range per commit. */
static int upgrade_pack_tag_values(sqlite3 *db)
{
	static const char sql[] = "UPDATE tags SET value = tagval_key(value)"
				  " WHERE rowid >= ?1 AND rowid < ?2 AND length(value) = 64";
	sqlite3_stmt *st = NULL;
	int64_t last = 0, packed = 0;
	int rc = 0;

	if (tagval_register(db) ||
	    sql_read_int(db, "SELECT coalesce(max(rowid), 0) FROM tags", &last) ||
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_warnx("schema upgrade: %s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return ERR_DB;
	}
	if (last > 0)
		log_info("schema upgrade: packing hex tag values (rowids up to %lld)",
			 (long long)last);
	for (int64_t from = 0; from <= last && rc == 0; from += UPGRADE_CHUNK_ROWS) {
		/* Under systemd a large database takes longer than the unit's
		 * start timeout: each range asks for another minute. */
		notify_send("EXTEND_TIMEOUT_USEC=60000000\nSTATUS=upgrading the database");
		sqlite3_bind_int64(st, 1, from);
		sqlite3_bind_int64(st, 2, from + UPGRADE_CHUNK_ROWS);
		if (sqlite3_step(st) != SQLITE_DONE) {
			log_warnx("schema upgrade: %s", sqlite3_errmsg(db));
			rc = ERR_DB;
		}
		packed += sqlite3_changes(db);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc == 0 && last > 0)
		log_info("schema upgrade: %lld tag values packed", (long long)packed);
	return rc;
}

/* Version 1 to 2: the full-text index moved to search.db (search_index.h),
 * which rebuilds it from the events in the background; the old one and the
 * trigger that kept it go. */
static int upgrade_move_search_index(sqlite3 *db)
{
	static const char sql[] =
		"BEGIN;"
		"DROP TRIGGER IF EXISTS events_cleanup;"
		"CREATE TRIGGER events_cleanup AFTER DELETE ON events BEGIN"
		" DELETE FROM tags WHERE seq = old.seq;"
		" END;"
		"DROP TABLE IF EXISTS events_fts;"
		"COMMIT;";
	int64_t had = 0;

	if (sql_read_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'events_fts'", &had))
		return ERR_DB;
	if (had) {
		notify_send("EXTEND_TIMEOUT_USEC=60000000\nSTATUS=upgrading the database");
		log_info("schema upgrade: the search index moves to its own file; dropping the old"
			 " one (relayctl vacuum returns its pages to the file system)");
	}
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("schema upgrade: %s", sqlite3_errmsg(db));
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return ERR_DB;
	}
	return 0;
}

int upgrade_schema(sqlite3 *db)
{
	int64_t version;
	char sql[64];

	if (sql_read_int(db, "PRAGMA user_version", &version))
		return ERR_DB;
	if (version > UPGRADE_SCHEMA_VERSION) {
		log_warnx("the database's schema version %lld is newer than this stored's (%d):"
			  " run the relay that wrote it",
			  (long long)version, UPGRADE_SCHEMA_VERSION);
		return ERR_DB;
	}
	if (version == UPGRADE_SCHEMA_VERSION)
		return 0;
	if (version < 1 && upgrade_pack_tag_values(db))
		return ERR_DB;
	if (version < 2 && upgrade_move_search_index(db))
		return ERR_DB;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", UPGRADE_SCHEMA_VERSION);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("schema upgrade: %s", sqlite3_errmsg(db));
		return ERR_DB;
	}
	return 0;
}
