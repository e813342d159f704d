/*
 * test_db.c - checks stored/db.c on real database files in a private
 * mkdtemp() directory under /tmp: the schema (tables, columns, indexes), WAL
 * mode, the page size of new and existing files, the synchronous setting, db_count_events and db_max_seq on empty and
 * filled databases, that a read-only open cannot write (nor create a file),
 * that a reader sees only committed rows, that AUTOINCREMENT never hands
 * out a seq again after the largest row is deleted, and that deleting an
 * event removes its tags and full-text rows (the cleanup trigger), and that
 * db_finish_wal() leaves a file that holds every commit without its WAL,
 * and that every connection's page cache is 32 MiB, or what
 * db_use_cache_mb() set before it opened (PRAGMA cache_size reads back
 * negative KiB).
 *
 * Expected values are the documented ones (db.h and SQLite's PRAGMA docs:
 * synchronous reads back 2 for FULL, 1 for NORMAL); rows are inserted with
 * the test's own SQL.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/log.h"
#include "../../stored/db.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

/* The directory every test's database lives in: made once by the parent
 * process (unchecked fixture) and removed with whatever is left in it, so a
 * failing test, whose forked child exits before its teardown, leaves no
 * litter in /tmp. */
TMPDIR_SUITE("test_db")

static char db_path[TMPDIR_FILE_MAX];

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	log_set_level(LOG_ERROR); /* expected failures log warnings */
}

static void teardown(void)
{
	testdb_unlink(db_path);
}

static sqlite3 *open_writer(const char *synchronous)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, true, synchronous, &db), 0);
	ck_assert_ptr_nonnull(db);
	return db;
}

static sqlite3 *open_reader(void)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, false, NULL, &db), 0);
	ck_assert_ptr_nonnull(db);
	return db;
}

static int exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static void insert_events(sqlite3 *db, int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(exec(db,
				      "INSERT INTO events(id, pubkey, created_at, kind, addr, json)"
				      " VALUES(randomblob(32), zeroblob(32), 1, 1, NULL, '{}')"),
				 SQLITE_OK);
}

static const char *sql_text(sqlite3 *db, const char *sql)
{
	static char out[256];
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

static void expect_counts(sqlite3 *db, uint64_t count, int64_t max_seq)
{
	uint64_t n = 12345;
	int64_t seq = 12345;

	ck_assert_int_eq(db_count_events(db, &n), 0);
	ck_assert_uint_eq(n, count);
	ck_assert_int_eq(db_max_seq(db, &seq), 0);
	ck_assert_int_eq(seq, max_seq);
}

START_TEST(test_schema)
{
	static const char *const objects[] = {
		"table events",
		"table tags",
		"table sqlite_sequence",
		"index events_created",
		"index events_pubkey",
		"index events_kind",
		"index events_pubkey_kind",
		"index events_addr",
		"index tags_value",
		"index tags_seq",
		"index events_expires",
		"table deleted_ids",
		"table deleted_addrs",
		"table vanished",
		"table banned_pubkeys",
		"table search_gone",
		"table db_identity",
		"trigger events_cleanup",
	};
	sqlite3 *db = open_writer("full");
	char sql[160];

	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		char type[16], name[64];

		sscanf(objects[i], "%15s %63s", type, name);
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM sqlite_master WHERE type = '%s' AND name = '%s'",
			 type, name);
		ck_assert_msg(testdb_int(db, sql) == 1, "missing %s", objects[i]);
	}
	ck_assert_str_eq(sql_text(db,
				  "SELECT group_concat(name, ',') FROM "
				  "(SELECT name FROM pragma_table_info('events') ORDER BY cid)"),
			 "seq,id,pubkey,created_at,kind,addr,expires_at,json");
	ck_assert_str_eq(sql_text(db, "SELECT group_concat(name, ',') FROM "
				      "(SELECT name FROM pragma_table_info('tags') ORDER BY cid)"),
			 "seq,name,value,created_at");
	/* seq is the rowid (INTEGER PRIMARY KEY) and ids are unique. */
	ck_assert_int_eq(
	    testdb_int(db, "SELECT pk FROM pragma_table_info('events') WHERE name = 'seq'"), 1);
	insert_events(db, 1);
	ck_assert_int_eq(exec(db, "INSERT INTO events(id, pubkey, created_at, kind, json)"
				  " SELECT id, pubkey, 2, 2, 'x' FROM events"),
			 SQLITE_CONSTRAINT);
	ck_assert_int_eq(exec(db, "INSERT INTO events(id, pubkey, created_at, kind)"
				  " VALUES(x'01', x'02', 3, 3)"),
			 SQLITE_CONSTRAINT);
	db_close(db);
}
END_TEST

/* Opening again keeps the data (the schema statements are IF NOT EXISTS). */
START_TEST(test_reopen_keeps_rows)
{
	sqlite3 *db = open_writer("full");

	insert_events(db, 3);
	db_close(db);
	db = open_writer("normal");
	expect_counts(db, 3, 3);
	db_close(db);
}
END_TEST

START_TEST(test_wal_mode)
{
	sqlite3 *db = open_writer("full"), *ro;

	ck_assert_str_eq(sql_text(db, "PRAGMA journal_mode"), "wal");
	insert_events(db, 1);
	ro = open_reader();
	/* WAL is a property of the file: the reader sees it too. */
	ck_assert_str_eq(sql_text(ro, "PRAGMA journal_mode"), "wal");
	db_close(ro);
	db_close(db);
}
END_TEST

/* A new database gets 8 KiB pages; one made elsewhere with SQLite's
 * default keeps its own, since a page size cannot change once written. */
START_TEST(test_page_size)
{
	sqlite3 *db = open_writer("full"), *plain;

	ck_assert_int_eq(testdb_int(db, "PRAGMA page_size"), 8192);
	db_close(db);
	testdb_unlink(db_path);
	ck_assert_int_eq(sqlite3_open(db_path, &plain), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(plain, "PRAGMA page_size=4096; CREATE TABLE other(x)", NULL,
				      NULL, NULL), SQLITE_OK);
	sqlite3_close(plain);
	db = open_writer("full");
	ck_assert_int_eq(testdb_int(db, "PRAGMA page_size"), 4096);
	insert_events(db, 2);
	expect_counts(db, 2, 2);
	db_close(db);
}
END_TEST

/* The checkpoint thread's connection runs no schema statements: an index
 * the writer's connection dropped stays dropped (a writable db_open()
 * would create it again), and synchronous is set. */
START_TEST(test_checkpointer_leaves_schema)
{
	sqlite3 *db = open_writer("full"), *cp = NULL;
	const char *count_sql = "SELECT count(*) FROM sqlite_master WHERE name = 'tags_value'";

	ck_assert_int_eq(testdb_int(db, count_sql), 1);
	ck_assert_int_eq(sqlite3_exec(db, "DROP INDEX tags_value", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(db_open_checkpointer(db_path, "normal", &cp), 0);
	ck_assert_int_eq(testdb_int(cp, "PRAGMA synchronous"), 1);
	ck_assert_int_eq(testdb_int(db, count_sql), 0);
	ck_assert_int_eq(testdb_int(cp, count_sql), 0);
	db_close(cp);
	db_close(db);
}
END_TEST

static const struct {
	const char *mode;
	int value;
} sync_modes[] = { { "full", 2 }, { "normal", 1 } };

START_TEST(test_synchronous)
{
	sqlite3 *db = open_writer(sync_modes[_i].mode);

	ck_assert_int_eq(testdb_int(db, "PRAGMA synchronous"), sync_modes[_i].value);
	db_close(db);
}
END_TEST

START_TEST(test_counts)
{
	sqlite3 *db = open_writer("normal"), *ro;

	expect_counts(db, 0, 0);
	ro = open_reader();
	expect_counts(ro, 0, 0);
	insert_events(db, 5);
	expect_counts(db, 5, 5);
	expect_counts(ro, 5, 5);
	ck_assert_int_eq(exec(db, "DELETE FROM events WHERE seq IN (1, 2)"), SQLITE_OK);
	expect_counts(ro, 3, 5);
	db_close(ro);
	db_close(db);
}
END_TEST

/* A reader sees a write only once it is committed. */
START_TEST(test_reader_sees_commits)
{
	sqlite3 *db = open_writer("normal"), *ro = open_reader();

	ck_assert_int_eq(exec(db, "BEGIN"), SQLITE_OK);
	insert_events(db, 2);
	expect_counts(db, 2, 2);
	expect_counts(ro, 0, 0);
	ck_assert_int_eq(exec(db, "COMMIT"), SQLITE_OK);
	expect_counts(ro, 2, 2);
	db_close(ro);
	db_close(db);
}
END_TEST

START_TEST(test_read_only)
{
	sqlite3 *db = open_writer("full"), *ro;

	insert_events(db, 1);
	ro = open_reader();
	ck_assert_int_eq(exec(ro, "INSERT INTO events(id, pubkey, created_at, kind, json)"
				  " VALUES(x'01', x'02', 3, 3, '{}')"),
			 SQLITE_READONLY);
	ck_assert_int_eq(exec(ro, "DELETE FROM events"), SQLITE_READONLY);
	ck_assert_int_eq(exec(ro, "CREATE TABLE t(x)"), SQLITE_READONLY);
	expect_counts(ro, 1, 1);
	db_close(ro);
	expect_counts(db, 1, 1);
	db_close(db);
}
END_TEST

START_TEST(test_read_only_missing_file)
{
	sqlite3 *ro = NULL;

	ck_assert_int_eq(db_open(db_path, false, NULL, &ro), ERR_DB);
	ck_assert_ptr_null(ro);
	ck_assert_int_ne(access(db_path, F_OK), 0);
}
END_TEST

START_TEST(test_open_bad_directory)
{
	sqlite3 *db = NULL;
	char path[160];

	snprintf(path, sizeof(path), "%s/missing/relay.db", tmp_dir);
	ck_assert_int_eq(db_open(path, true, "full", &db), ERR_DB);
	ck_assert_ptr_null(db);
}
END_TEST

/* A file that is not a database is refused, not clobbered. */
START_TEST(test_open_garbage_file)
{
	sqlite3 *db = NULL;
	FILE *f = fopen(db_path, "w");

	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not an sqlite database\n", f);
	fclose(f);
	ck_assert_int_eq(db_open(db_path, true, "full", &db), ERR_DB);
	ck_assert_ptr_null(db);
}
END_TEST

START_TEST(test_autoincrement_never_reuses)
{
	sqlite3 *db = open_writer("normal");

	insert_events(db, 3);
	ck_assert_int_eq(exec(db, "DELETE FROM events WHERE seq = 3"), SQLITE_OK);
	expect_counts(db, 2, 2);
	insert_events(db, 1);
	expect_counts(db, 3, 4);
	/* Even an empty table, and a reopened one, continue past the old maximum. */
	ck_assert_int_eq(exec(db, "DELETE FROM events"), SQLITE_OK);
	expect_counts(db, 0, 0);
	db_close(db);
	db = open_writer("normal");
	insert_events(db, 1);
	expect_counts(db, 1, 5);
	db_close(db);
}
END_TEST

/* Deleting an event, by whatever path, takes its tags. */
START_TEST(test_cleanup_trigger)
{
	sqlite3 *db = open_writer("normal");

	insert_events(db, 2);
	ck_assert_int_eq(exec(db, "INSERT INTO tags(seq, name, value, created_at) VALUES"
				  " (1, 'e', x'01', 1), (1, 't', x'02', 1), (2, 'e', x'01', 1)"),
			 SQLITE_OK);
	ck_assert_int_eq(exec(db, "DELETE FROM events WHERE seq = 1"), SQLITE_OK);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE seq = 1"), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE seq = 2"), 1);
	db_close(db);
}
END_TEST

START_TEST(test_cache_size_default_and_set)
{
	sqlite3 *w = open_writer("normal"), *r;

	ck_assert_int_eq(testdb_int(w, "PRAGMA cache_size"), -32768);
	db_use_cache_mb(8);
	r = open_reader();
	ck_assert_int_eq(testdb_int(r, "PRAGMA cache_size"), -8192);
	ck_assert_int_eq(testdb_int(w, "PRAGMA cache_size"), -32768); /* opened before */
	db_close(r);
	db_close(w);
	db_use_cache_mb(32);
}
END_TEST

/* SQLite's memory statistics are off after db_init_library() (each test
 * runs in a fresh child, so SQLite is not yet in use): allocations are no
 * longer counted, which is what their global mutex was for.  Once SQLite
 * is in use, the setting can no longer change and the call says so. */
START_TEST(test_init_library_turns_memory_statistics_off)
{
	sqlite3 *db;

	ck_assert_int_eq(db_init_library(), 0);
	db = open_writer("normal");
	insert_events(db, 2);
	ck_assert_int_eq((int)sqlite3_memory_used(), 0);
	ck_assert_int_eq(db_init_library(), ERR_DB);
	db_close(db);
}
END_TEST

/* Without it, the same work is counted: the check above can fail. */
START_TEST(test_memory_statistics_are_on_by_default)
{
	sqlite3 *db = open_writer("normal");

	insert_events(db, 2);
	ck_assert_int_gt((int)sqlite3_memory_used(), 0);
	db_close(db);
}
END_TEST

/* db_attach opens its file by URI: a directory whose name holds what a URI
 * gives a meaning to (space, ?, #, %) must still name the same file, and
 * what is attached is read-only. */
START_TEST(test_attach_any_path_read_only)
{
	char dir[TMPDIR_FILE_MAX + 32], other[TMPDIR_FILE_MAX + 48];
	sqlite3 *db = open_writer("normal"), *side;

	snprintf(dir, sizeof(dir), "%s/a b?c#d%%41", tmp_dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(other, sizeof(other), "%s/side.db", dir);
	ck_assert_int_eq(sqlite3_open(other, &side), SQLITE_OK);
	ck_assert_int_eq(exec(side, "CREATE TABLE t(x); INSERT INTO t VALUES(42)"), SQLITE_OK);
	sqlite3_close(side);

	ck_assert_int_eq(db_attach(db, other, "side"), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT x FROM side.t"), 42);
	ck_assert_int_ne(exec(db, "INSERT INTO side.t VALUES(1)"), SQLITE_OK);
	ck_assert_int_eq(exec(db, "DETACH DATABASE side"), SQLITE_OK);
	db_close(db);
	testdb_unlink(other);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* db_identity's token in hex, into out (33 bytes). */
static void identity_hex(sqlite3 *db, char *out)
{
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT hex(token) FROM db_identity", -1, &st, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(out, 33, "%s", (const char *)sqlite3_column_text(st, 0));
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE); /* one row only */
	sqlite3_finalize(st);
}

/* The token search.db checks is random, made once, and kept across opens. */
START_TEST(test_identity_is_kept)
{
	char first[33], again[33], other[33];
	sqlite3 *db = open_writer("normal");

	identity_hex(db, first);
	ck_assert_int_eq((int)strlen(first), 32);
	db_close(db);
	db = open_writer("normal");
	identity_hex(db, again);
	ck_assert_str_eq(again, first);
	db_close(db);
	testdb_unlink(db_path);
	db = open_writer("normal");
	identity_hex(db, other);
	ck_assert_str_ne(other, first); /* a new file, a new token */
	db_close(db);
}
END_TEST

/* Copies the database file alone, without its WAL, as a careless backup
 * would, and counts the events that copy holds (-1: no events table). */
static int64_t events_in_file_alone(void)
{
	char copy[TMPDIR_FILE_MAX + 8], buf[65536];
	FILE *in, *out;
	size_t n;
	sqlite3 *db;
	int64_t count = -1;

	snprintf(copy, sizeof(copy), "%s.copy", db_path);
	ck_assert_ptr_nonnull(in = fopen(db_path, "rb"));
	ck_assert_ptr_nonnull(out = fopen(copy, "wb"));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	ck_assert_int_eq(sqlite3_open_v2(copy, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (testdb_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'events'"))
		count = testdb_int(db, "SELECT count(*) FROM events");
	sqlite3_close(db);
	testdb_unlink(copy);
	return count;
}

/* stored's last connections to close are read-only, and those leave the
 * WAL behind with commits the file alone does not have; db_finish_wal()
 * puts them in the file and removes the WAL. */
START_TEST(test_finish_wal_puts_every_commit_in_the_file)
{
	sqlite3 *w = open_writer("full"), *r = open_reader();
	char wal[TMPDIR_FILE_MAX + 8];
	struct stat st;

	snprintf(wal, sizeof(wal), "%s-wal", db_path);
	ck_assert_int_eq(exec(w, "PRAGMA wal_autocheckpoint=0"), SQLITE_OK);
	insert_events(w, 50);
	ck_assert_int_eq(testdb_int(r, "SELECT count(*) FROM events"), 50);
	db_close(w); /* not the last connection: no checkpoint */
	db_close(r); /* read-only: cannot checkpoint */
	ck_assert_int_eq(stat(wal, &st), 0);
	ck_assert_int_gt(st.st_size, 0);
	ck_assert_int_lt(events_in_file_alone(), 50);
	ck_assert_int_eq(db_finish_wal(db_path), 0);
	ck_assert_int_ne(stat(wal, &st), 0);
	ck_assert_int_eq(events_in_file_alone(), 50);
	/* Again, with nothing left to do, and for a file that is not there. */
	ck_assert_int_eq(db_finish_wal(db_path), 0);
	ck_assert_int_eq(events_in_file_alone(), 50);
	testdb_unlink(db_path);
	ck_assert_int_eq(db_finish_wal(db_path), 0);
	ck_assert_int_ne(access(db_path, F_OK), 0);
}
END_TEST

START_TEST(test_close_null)
{
	db_close(NULL);
}
END_TEST

static Suite *db_suite(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("db");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_schema);
	tcase_add_test(tc, test_reopen_keeps_rows);
	tcase_add_test(tc, test_wal_mode);
	tcase_add_test(tc, test_page_size);
	tcase_add_test(tc, test_checkpointer_leaves_schema);
	tcase_add_loop_test(tc, test_synchronous, 0,
			    (int)(sizeof(sync_modes) / sizeof(sync_modes[0])));
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_reader_sees_commits);
	tcase_add_test(tc, test_finish_wal_puts_every_commit_in_the_file);
	tcase_add_test(tc, test_read_only);
	tcase_add_test(tc, test_read_only_missing_file);
	tcase_add_test(tc, test_open_bad_directory);
	tcase_add_test(tc, test_open_garbage_file);
	tcase_add_test(tc, test_autoincrement_never_reuses);
	tcase_add_test(tc, test_cleanup_trigger);
	tcase_add_test(tc, test_identity_is_kept);
	tcase_add_test(tc, test_attach_any_path_read_only);
	tcase_add_test(tc, test_cache_size_default_and_set);
	tcase_add_test(tc, test_init_library_turns_memory_statistics_off);
	tcase_add_test(tc, test_memory_statistics_are_on_by_default);
	tcase_add_test(tc, test_close_null);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(db_suite());
}
