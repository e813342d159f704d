/*
 * test_upgrade.c - checks stored/upgrade.c through db_open() on real files
 * in a private directory: a version-0 database (rows written with the
 * test's own SQL, as stored wrote them before: every tag value as its
 * text) comes out at version 1 with exactly its lowercase 64-digit values
 * packed, in every rowid range of the conversion, and its events found by
 * a `#p` filter through query_sql; a new database starts at version 1; a
 * newer version is refused and left untouched.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "../../common/filter.h"
#include "../../common/log.h"
#include "../../stored/db.h"
#include "../../stored/query_sql.h"
#include "../../stored/upgrade.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_upgrade")

static char db_path[TMPDIR_FILE_MAX];

#define HEX "00ff10ab23cd45ef6789abcdef0123456789abcdef0123456789abcdef012345"
#define HEX_UPPER "00FF10AB23CD45EF6789ABCDEF0123456789ABCDEF0123456789ABCDEF012345"
#define PACKED "x'0000ff10ab23cd45ef6789abcdef0123456789abcdef0123456789abcdef012345'"

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	log_set_level(LOG_ERROR);
}

static void teardown(void)
{
	testdb_unlink(db_path);
}

static sqlite3 *open_writer(void)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	return db;
}

/* Rows of a version-0 database: one event, tags at rowids on both sides of
 * every conversion range's edge, as text blobs. */
static void write_version_0(void)
{
	sqlite3 *db = open_writer();
	char sql[512];
	const long long rowids[] = { 1, UPGRADE_CHUNK_ROWS - 1, UPGRADE_CHUNK_ROWS,
				     UPGRADE_CHUNK_ROWS + 1, 3LL * UPGRADE_CHUNK_ROWS + 7 };

	testdb_exec(db, "PRAGMA user_version=0");
	testdb_exec(db, "INSERT INTO events(seq, id, pubkey, created_at, kind, json)"
			" VALUES(1, zeroblob(32), zeroblob(32), 5, 1, '{}')");
	for (size_t i = 0; i < sizeof(rowids) / sizeof(rowids[0]); i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO tags(rowid, seq, name, value, created_at)"
			 " VALUES(%lld, 1, 'p', CAST('" HEX "' AS BLOB), 5)",
			 rowids[i]);
		testdb_exec(db, sql);
	}
	testdb_exec(db, "INSERT INTO tags(rowid, seq, name, value, created_at) VALUES"
			" (10, 1, 'q', CAST('" HEX_UPPER "' AS BLOB), 5),"
			" (11, 1, 't', CAST('nostr' AS BLOB), 5),"
			" (12, 1, 'x', CAST('" HEX "0' AS BLOB), 5)");
	db_close(db);
}

/* Events a `#p` (or other) filter in JSON finds through query_sql. */
static int found_by(sqlite3 *db, const char *json)
{
	cJSON *obj = cJSON_Parse(json);
	struct filter f;
	char why[128];
	sqlite3_stmt *st;
	int n = 0;

	ck_assert_ptr_nonnull(obj);
	ck_assert_int_eq(filter_parse(obj, NULL, &f, why, sizeof(why)), 0);
	ck_assert_int_eq(query_sql_prepare(db, &f, INT64_MAX, 100, &st), 0);
	while (sqlite3_step(st) == SQLITE_ROW)
		n++;
	sqlite3_finalize(st);
	filter_free(&f);
	cJSON_Delete(obj);
	return n;
}

START_TEST(packs_a_version_0_database)
{
	sqlite3 *db;

	write_version_0();
	db = open_writer();
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE value = " PACKED), 5);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 8);
	ck_assert_int_eq(
	    testdb_int(db, "SELECT count(*) FROM tags WHERE rowid = 10 AND value = CAST('" HEX_UPPER
			   "' AS BLOB)"),
	    1);
	ck_assert_int_eq(
	    testdb_int(db, "SELECT count(*) FROM tags WHERE rowid = 11 AND value = x'6e6f737472'"), 1);
	ck_assert_int_eq(testdb_int(db, "SELECT length(value) FROM tags WHERE rowid = 12"), 65);
	ck_assert_int_eq(found_by(db, "{\"#p\":[\"" HEX "\"]}"), 1);
	ck_assert_int_eq(found_by(db, "{\"#q\":[\"" HEX_UPPER "\"]}"), 1);
	ck_assert_int_eq(found_by(db, "{\"#q\":[\"" HEX "\"]}"), 0);
	db_close(db);
}
END_TEST

/* Version 1 kept the full-text index in relay.db, with a trigger that
 * deleted from it; version 2 drops both (search.db is rebuilt from the
 * events), and deleting an event still takes its tags. */
START_TEST(moves_the_search_index_out_of_a_version_1_database)
{
	sqlite3 *db = open_writer();

	testdb_exec(db, "CREATE VIRTUAL TABLE events_fts USING fts5(content, tokenize='unicode61');"
			"DROP TRIGGER events_cleanup;"
			"CREATE TRIGGER events_cleanup AFTER DELETE ON events BEGIN"
			" DELETE FROM tags WHERE seq = old.seq;"
			" DELETE FROM events_fts WHERE rowid = old.seq;"
			" END;"
			"INSERT INTO events(seq, id, pubkey, created_at, kind, json)"
			" VALUES(1, zeroblob(32), zeroblob(32), 5, 1, '{}');"
			"INSERT INTO events_fts(rowid, content) VALUES(1, 'old text');"
			"INSERT INTO tags(seq, name, value, created_at) VALUES(1, 't', x'01', 5);"
			"PRAGMA user_version=1");
	db_close(db);
	db = open_writer();
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM sqlite_master"
				       " WHERE name LIKE 'events_fts%'"),
			 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
				       " AND sql LIKE '%events_fts%'"),
			 0);
	testdb_exec(db, "DELETE FROM events WHERE seq = 1");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 0);
	db_close(db);
}
END_TEST

START_TEST(new_database_is_current)
{
	sqlite3 *db = open_writer();

	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	db_close(db);
}
END_TEST

START_TEST(newer_version_refused)
{
	sqlite3 *db = open_writer();
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", UPGRADE_SCHEMA_VERSION + 1);
	testdb_exec(db, sql);
	db_close(db);
	db = NULL;
	ck_assert_int_ne(db_open(db_path, true, "normal", &db), 0);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION + 1);
	sqlite3_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("upgrade");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, packs_a_version_0_database);
	tcase_add_test(tc, moves_the_search_index_out_of_a_version_1_database);
	tcase_add_test(tc, new_database_is_current);
	tcase_add_test(tc, newer_version_refused);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
