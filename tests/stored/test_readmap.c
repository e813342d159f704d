/*
 * test_readmap.c - checks stored/readmap.c through db_open(), on real WAL
 * databases in a private temp directory:
 *
 *   - a reader opened with the map on reads its pages from the map (the
 *     fetch count grows) and sees exactly the rows written; the writer, and
 *     a reader opened with the map off, take nothing from any map;
 *   - a reader that stays open while the writer commits, checkpoints into
 *     the file and grows it far past the map's reserve (a 1 MiB step here)
 *     sees every committed row after each commit, with the right content,
 *     and the map is made again as the file outgrows it;
 *   - a reader inside one read transaction keeps its snapshot while the
 *     writer adds rows, lengthens a seventh of the old ones (pages the
 *     reader has read) and checkpoints: the same count and the same sum of
 *     lengths before and after (a page the checkpoint wrote under its map
 *     would show a row or a length it must not see), and all of it once
 *     the transaction ends;
 *   - integrity_check through a mapped reader after all of that is "ok";
 *   - the file shrinking under a reader's map (most rows deleted, VACUUM,
 *     a truncating checkpoint; relayctl vacuum does this) costs nothing: the
 *     reader's next transaction sees the shrunk database, whole, and never
 *     touches the map past the file's new end (which would be SIGBUS).
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../stored/db.h"
#include "../../stored/readmap.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_readmap")
static char db_path[TMPDIR_FILE_MAX];

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	db_use_read_map(true);
	readmap_use_step((size_t)1 << 20);
}

static void teardown(void)
{
	db_use_read_map(false);
	readmap_use_step(0);
	testdb_unlink(db_path);
}

static sqlite3 *open_writer(void)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	testdb_exec(db, "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT NOT NULL)");
	return db;
}

static sqlite3 *open_reader(void)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, false, NULL, &db), 0);
	return db;
}

/* Rows from..to-1, v a 700-character text that names k, in one transaction. */
static void insert_rows(sqlite3 *db, int from, int to)
{
	char sql[200];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE n(k) AS (SELECT %d UNION ALL SELECT k + 1 FROM n WHERE k < %d)"
		 " INSERT INTO t SELECT k, printf('%%d:%%0690d', k, k) FROM n",
		 from, to - 1);
	testdb_exec(db, sql);
}

static uint64_t fetched(void)
{
	struct readmap_counts c;

	readmap_counts(&c);
	return c.fetched;
}

static uint64_t maps(void)
{
	struct readmap_counts c;

	readmap_counts(&c);
	return c.maps;
}

/* Rows whose text does not start by naming their own key: 0 when every
 * page read holds what was written. */
static int64_t wrong_rows(sqlite3 *db)
{
	return testdb_int(db, "SELECT count(*) FROM t WHERE v NOT LIKE printf('%d:%0690d', k, k) || '%'");
}

START_TEST(reader_uses_the_map_and_others_do_not)
{
	sqlite3 *w = open_writer(), *r, *plain;
	uint64_t before;

	insert_rows(w, 1, 2001);
	testdb_exec(w, "PRAGMA wal_checkpoint(TRUNCATE)"); /* the rows are in the file now */
	before = fetched();
	ck_assert_int_eq(testdb_int(w, "SELECT count(*) FROM t"), 2000);
	ck_assert_uint_eq(fetched(), before); /* the writer is not mapped */
	db_use_read_map(false);
	plain = open_reader();
	db_use_read_map(true);
	ck_assert_int_eq(wrong_rows(plain), 0);
	ck_assert_uint_eq(fetched(), before);
	r = open_reader();
	ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM t"), 2000);
	ck_assert_int_eq(wrong_rows(r), 0);
	ck_assert_uint_gt(fetched(), before + 100); /* ~180 pages of 8 KiB */
	db_close(plain);
	db_close(r);
	db_close(w);
}
END_TEST

START_TEST(reader_follows_a_growing_file)
{
	sqlite3 *w = open_writer(), *r;
	uint64_t maps_before;

	insert_rows(w, 1, 101);
	r = open_reader();
	ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM t"), 100);
	maps_before = maps();
	/* 40 commits of 250 rows (~10 MB in all), a checkpoint after every
	 * fourth: the file outgrows a 1 MiB reserve again and again. */
	for (int i = 0; i < 40; i++) {
		int from = 101 + i * 250;

		insert_rows(w, from, from + 250);
		if (i % 4 == 3)
			testdb_exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
		ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM t"), from + 249);
		ck_assert_int_eq(testdb_int(r, "SELECT max(k) FROM t"), from + 249);
	}
	ck_assert_int_eq(wrong_rows(r), 0);
	ck_assert_uint_gt(maps(), maps_before + 3);
	{
		sqlite3_stmt *st;

		ck_assert_int_eq(sqlite3_prepare_v2(r, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
	}
	db_close(r);
	db_close(w);
}
END_TEST

START_TEST(snapshot_holds_under_checkpoints)
{
	sqlite3 *w = open_writer(), *r;
	int64_t count, sum;

	insert_rows(w, 1, 3001);
	testdb_exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
	r = open_reader();
	testdb_exec(r, "BEGIN");
	count = testdb_int(r, "SELECT count(*) FROM t");
	sum = testdb_int(r, "SELECT sum(length(v) + k) FROM t");
	ck_assert_int_eq(count, 3000);
	for (int i = 0; i < 10; i++) {
		insert_rows(w, 3001 + i * 300, 3301 + i * 300);
		testdb_exec(w, "UPDATE t SET v = v || 'x' WHERE k % 7 = 0"); /* rewrites pages r has read */
		testdb_exec(w, "PRAGMA wal_checkpoint(PASSIVE)");
		ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM t"), count);
		ck_assert_int_eq(testdb_int(r, "SELECT sum(length(v) + k) FROM t"), sum);
	}
	testdb_exec(r, "COMMIT");
	ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM t"), 6000);
	ck_assert_int_gt(testdb_int(r, "SELECT sum(length(v) + k) FROM t"), sum);
	ck_assert_int_eq(wrong_rows(r), 0);
	db_close(r);
	db_close(w);
}
END_TEST

START_TEST(file_shrinks_under_the_map)
{
	sqlite3 *w = open_writer(), *r;
	int64_t big, small;

	insert_rows(w, 1, 5001);
	testdb_exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
	r = open_reader();
	ck_assert_int_eq(wrong_rows(r), 0); /* every page of the big file read through the map */
	big = testdb_int(r, "PRAGMA page_count");
	testdb_exec(w, "DELETE FROM t WHERE k > 100");
	testdb_exec(w, "VACUUM");
	testdb_exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
	small = testdb_int(w, "PRAGMA page_count");
	ck_assert_int_lt(small * 4, big);
	ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM t"), 100);
	ck_assert_int_eq(wrong_rows(r), 0);
	ck_assert_int_eq(testdb_int(r, "PRAGMA page_count"), small);
	db_close(r);
	db_close(w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("readmap");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reader_uses_the_map_and_others_do_not);
	tcase_add_test(tc, reader_follows_a_growing_file);
	tcase_add_test(tc, snapshot_holds_under_checkpoints);
	tcase_add_test(tc, file_shrinks_under_the_map);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
