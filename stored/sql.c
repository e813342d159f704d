/* sql.c - one-off SQL on any connection (see sql.h). */
#include "sql.h"

#include <stddef.h>

#include "../common/err.h"
#include "../common/log.h"

int sql_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_warnx("sqlite: %s: %s", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return ERR_DB;
	}
	return 0;
}

int sql_read_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = ERR_DB;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return ERR_DB;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}
