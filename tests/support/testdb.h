/*
 * testdb.h - small SQLite helpers the stored suites share.
 *
 * Header-only, like tmpdir.h.  testdb_exec() runs SQL that must succeed
 * (the test fails with SQLite's message otherwise); testdb_int() runs a
 * query that must return one row and gives its first column (the test
 * fails otherwise);
 * testdb_unlink() removes a database file with its WAL, shared-memory and
 * journal companions.
 */
#ifndef TESTS_SUPPORT_TESTDB_H
#define TESTS_SUPPORT_TESTDB_H

#include <check.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static inline void testdb_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		ck_abort_msg("%s: %s", sql, msg ? msg : "?");
}

static inline int64_t testdb_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static inline void testdb_unlink(const char *path)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char name[4096];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
		unlink(name);
	}
}

#endif
