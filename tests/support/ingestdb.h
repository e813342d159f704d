/*
 * ingestdb.h - the fixture of the stored suites that ingest events into a
 * real database (test_ingest.c, test_erase.c).
 *
 * Header-only, like tmpdir.h.  It calls stored/db.c and stored/ingest.c, so
 * only suites linked with stored's objects include it.  The suite keeps the
 * path, connection and ingest handle in its own statics and passes them in.
 */
#ifndef TESTS_SUPPORT_INGESTDB_H
#define TESTS_SUPPORT_INGESTDB_H

#include <check.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "../../stored/db.h"
#include "../../stored/ingest.h"
#include "testdb.h"
#include "tmpdir.h"

/*
 * Opens a fresh database file in dir (tmpdir_file() names it into path)
 * with db_open(), writable and synchronous = normal; makes an ingest handle
 * on it and begins a transaction.  *db and *in belong to the caller until
 * ingestdb_close().  Any failure fails the test.
 */
static inline void ingestdb_open(const char *dir, char path[TMPDIR_FILE_MAX], sqlite3 **db,
				 struct ingest **in)
{
	tmpdir_file(path, TMPDIR_FILE_MAX, dir, ".db");
	ck_assert_int_eq(db_open(path, true, "normal", db), 0);
	*in = ingest_new(*db);
	ck_assert_ptr_nonnull(*in);
	testdb_exec(*db, "BEGIN");
}

/*
 * Commits the open transaction, if any; frees in, closes db and removes the
 * file at path with its companions.  A failed COMMIT fails the test.
 */
static inline void ingestdb_close(const char *path, sqlite3 *db, struct ingest *in)
{
	if (sqlite3_get_autocommit(db) == 0)
		testdb_exec(db, "COMMIT");
	ingest_free(in);
	db_close(db);
	testdb_unlink(path);
}

#endif
