/*
 * sql.h - one-off SQL on any connection: run statements, read one integer.
 *
 * For schema statements, pragmas and single-row reads that are not worth a
 * prepared statement of their own.  db.h opens the connections; upgrade.h,
 * search_index.h and the writer run their SQL through these helpers too.
 */
#ifndef STORED_SQL_H
#define STORED_SQL_H

#include <sqlite3.h>
#include <stdint.h>

/* Runs sql on db: one or more statements, no rows wanted.  Returns 0, or
 * ERR_DB with the statement and SQLite's message logged. */
int sql_exec(sqlite3 *db, const char *sql);

/* Sets *out to the first column of sql's first row, as an integer.  Returns
 * 0, or ERR_DB (not logged) when sql fails or returns no row; *out is then
 * unchanged. */
int sql_read_int(sqlite3 *db, const char *sql, int64_t *out);

#endif
