/*
 * test_walbuf.c - checks stored/walbuf.c through db_open(), on real WAL
 * databases in a private temp directory:
 *
 *   - a writer opened with synchronous "full" or "normal" goes through the
 *     buffer (far fewer writes reach the file than SQLite asked for); a
 *     reader, or any connection with the buffer off, does not;
 *   - a reader on SQLite's own VFS sees every commit as soon as it returns,
 *     with either synchronous mode (the buffer is in the file before the WAL
 *     index shows the frames); at the level of the file, a commit frame is
 *     in it once its page is written, before any sync;
 *   - a transaction larger than the page cache (pages spilled to the WAL
 *     and read back before the commit) and a commit that changes the same
 *     pages twice come out intact: integrity_check and every row's content;
 *   - a process that dies (_exit, no close) after a commit loses nothing
 *     committed, with either mode, and one that dies inside a transaction
 *     leaves none of it;
 *   - after checkpoints and a reopen the database is whole;
 *   - at the level of one WAL file opened through the VFS: reads, the file
 *     size and a truncate see writes still in the buffer, a rewrite inside
 *     the buffer and writes that are not contiguous land where they belong.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../stored/db.h"
#include "../../stored/walbuf.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_walbuf")
static char db_path[TMPDIR_FILE_MAX];

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	db_use_wal_buffer(true);
}

static void teardown(void)
{
	db_use_wal_buffer(false);
	testdb_unlink(db_path);
}

static sqlite3 *open_writer(const char *synchronous)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, true, synchronous, &db), 0);
	testdb_exec(db, "CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)");
	return db;
}

/* Rows from..to-1, each v a 900-byte blob derived from k, in one
 * transaction. */
static void insert_rows(sqlite3 *db, int from, int to)
{
	char sql[160];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE n(k) AS (SELECT %d UNION ALL SELECT k + 1 FROM n WHERE k < %d)"
		 " INSERT INTO t SELECT k, zeroblob(900) FROM n",
		 from, to - 1);
	testdb_exec(db, "BEGIN");
	testdb_exec(db, sql);
	/* Stamp each row with its key so a torn or misplaced page shows. */
	snprintf(sql, sizeof(sql), "UPDATE t SET v = CAST(printf('%%0900d', k) AS BLOB)"
				   " WHERE k >= %d AND k < %d", from, to);
	testdb_exec(db, sql);
	testdb_exec(db, "COMMIT");
}

/* Every row 0..n-1 is there with its own stamp, and nothing else. */
static void expect_rows(sqlite3 *db, int n)
{
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM t"), n);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM t WHERE v = CAST(printf('%0900d', k)"
				    " AS BLOB)"),
			 n);
	if (n)
		ck_assert_int_eq(testdb_int(db, "SELECT max(k) FROM t"), n - 1);
}

static void expect_intact(sqlite3 *db)
{
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
}

static const char *const sync_modes[] = { "full", "normal" };

START_TEST(writer_is_buffered)
{
	struct walbuf_counts before, after;
	sqlite3 *db = open_writer(sync_modes[_i]);

	walbuf_counts(&before);
	for (int i = 0; i < 5; i++)
		insert_rows(db, i * 400, (i + 1) * 400);
	walbuf_counts(&after);
	/* 2,000 rows of ~1 KB are hundreds of frames, two writes each. */
	ck_assert_uint_gt(after.writes_asked - before.writes_asked, 500);
	ck_assert_uint_lt((after.writes_done - before.writes_done) * 10,
			  after.writes_asked - before.writes_asked);
	expect_rows(db, 2000);
	db_close(db);
}
END_TEST

START_TEST(others_are_not_buffered)
{
	struct walbuf_counts before, after;
	sqlite3 *db, *ro;

	db = open_writer("full");
	insert_rows(db, 0, 500);
	db_close(db);
	walbuf_counts(&before);
	ck_assert_int_eq(db_open(db_path, false, NULL, &ro), 0);
	expect_rows(ro, 500);
	db_close(ro);
	db_use_wal_buffer(false);
	db = open_writer("full");
	insert_rows(db, 500, 1000);
	expect_rows(db, 1000);
	db_close(db);
	walbuf_counts(&after);
	ck_assert_uint_eq(after.writes_asked, before.writes_asked);
	ck_assert_uint_eq(after.writes_done, before.writes_done);
}
END_TEST

START_TEST(reader_sees_each_commit)
{
	sqlite3 *db = open_writer(sync_modes[_i]), *ro;

	ck_assert_int_eq(db_open(db_path, false, NULL, &ro), 0);
	for (int i = 0; i < 20; i++) {
		insert_rows(db, i * 37, (i + 1) * 37);
		expect_rows(ro, (i + 1) * 37);
	}
	db_close(ro);
	db_close(db);
}
END_TEST

/* A 20-page cache cannot hold the transaction: SQLite spills pages into the
 * WAL mid-transaction and reads them back; then every row is rewritten, so
 * the commit changes frames it already wrote. */
START_TEST(spill_and_rewrite)
{
	sqlite3 *db = open_writer("full"), *ro;

	testdb_exec(db, "PRAGMA cache_size=20");
	insert_rows(db, 0, 3000);
	testdb_exec(db, "BEGIN");
	testdb_exec(db, "UPDATE t SET v = zeroblob(900)");
	testdb_exec(db, "UPDATE t SET v = CAST(printf('%0900d', k) AS BLOB)");
	testdb_exec(db, "COMMIT");
	expect_rows(db, 3000);
	expect_intact(db);
	ck_assert_int_eq(db_open(db_path, false, NULL, &ro), 0);
	expect_rows(ro, 3000);
	expect_intact(ro);
	db_close(ro);
	db_close(db);
}
END_TEST

/* A child commits `committed` rows, optionally writes more in a transaction
 * it never ends, then dies without closing anything. */
static void die_after(const char *synchronous, int committed, int uncommitted)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sqlite3 *db = open_writer(synchronous);

		insert_rows(db, 0, committed);
		if (uncommitted) {
			char sql[128];

			testdb_exec(db, "BEGIN");
			snprintf(sql, sizeof(sql),
				 "WITH RECURSIVE n(k) AS (SELECT %d UNION ALL SELECT k + 1 FROM n"
				 " WHERE k < %d) INSERT INTO t SELECT k, zeroblob(900) FROM n",
				 committed, committed + uncommitted - 1);
			testdb_exec(db, sql);
			testdb_exec(db, "PRAGMA cache_size=10"); /* let some of it reach the WAL */
			testdb_exec(db, "UPDATE t SET v = zeroblob(901) WHERE k >= 0");
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

START_TEST(crash_after_commit_keeps_it)
{
	sqlite3 *db;

	die_after(sync_modes[_i], 1500, 0);
	ck_assert_int_eq(db_open(db_path, false, NULL, &db), 0);
	expect_rows(db, 1500);
	expect_intact(db);
	db_close(db);
}
END_TEST

START_TEST(crash_inside_transaction_leaves_nothing)
{
	sqlite3 *db;

	die_after("full", 700, 2000);
	db = open_writer("full");
	expect_rows(db, 700);
	expect_intact(db);
	insert_rows(db, 700, 900); /* and the database takes writes again */
	expect_rows(db, 900);
	db_close(db);
}
END_TEST

START_TEST(checkpoints_and_reopen)
{
	sqlite3 *db = open_writer("full");

	for (int i = 0; i < 6; i++) {
		insert_rows(db, i * 300, (i + 1) * 300);
		testdb_exec(db, i % 2 ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(PASSIVE)");
	}
	db_close(db);
	db = open_writer("full");
	expect_rows(db, 1800);
	expect_intact(db);
	db_close(db);
}
END_TEST

/* The VFS's WAL file alone, against a plain byte array of what it must hold. */
START_TEST(file_semantics)
{
	sqlite3_vfs *vfs;
	sqlite3_file *f;
	sqlite3 *db;
	char wal[TMPDIR_FILE_MAX + 8];
	static unsigned char want[300000], got[300000], chunk[4120];
	sqlite3_int64 size, end = 0;
	int out_flags;

	ck_assert_int_eq(walbuf_register(), 0);
	vfs = sqlite3_vfs_find(WALBUF_VFS_NAME);
	ck_assert_ptr_nonnull(vfs);
	db = open_writer("full"); /* the database file a WAL belongs to */
	db_close(db);
	snprintf(wal, sizeof(wal), "%s-wal", db_path);
	f = calloc(1, (size_t)vfs->szOsFile);
	ck_assert_int_eq(vfs->xOpen(vfs, wal, f,
				    SQLITE_OPEN_WAL | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				    &out_flags),
			 SQLITE_OK);
	/* Contiguous writes of two sizes, as SQLite writes frames. */
	for (int i = 0; i < 40; i++) {
		int n = i % 2 ? 4096 : 24;

		memset(chunk, 'a' + i % 26, (size_t)n);
		ck_assert_int_eq(f->pMethods->xWrite(f, chunk, n, end), SQLITE_OK);
		memcpy(want + end, chunk, (size_t)n);
		end += n;
		/* Each read sees everything written so far. */
		ck_assert_int_eq(f->pMethods->xRead(f, got, (int)end, 0), SQLITE_OK);
		ck_assert_int_eq(memcmp(got, want, (size_t)end), 0);
	}
	/* More without reading, so they stay buffered; then a size query. */
	for (int i = 0; i < 10; i++) {
		memset(chunk, 'A' + i, 4120);
		ck_assert_int_eq(f->pMethods->xWrite(f, chunk, 4120, end), SQLITE_OK);
		memcpy(want + end, chunk, 4120);
		end += 4120;
	}
	ck_assert_int_eq(f->pMethods->xFileSize(f, &size), SQLITE_OK);
	ck_assert_int_eq(size, end);
	/* A rewrite inside the buffer, then writes elsewhere (a new WAL
	 * header at 0, a gap past the end). */
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(f->pMethods->xWrite(f, chunk, 24, end - 4120 * 2 + 100 * i),
				 SQLITE_OK);
		memcpy(want + end - 4120 * 2 + 100 * i, chunk, 24);
	}
	memset(chunk, 'z', 32);
	ck_assert_int_eq(f->pMethods->xWrite(f, chunk, 32, 0), SQLITE_OK);
	memcpy(want, chunk, 32);
	ck_assert_int_eq(f->pMethods->xWrite(f, chunk, 32, end + 1000), SQLITE_OK);
	memcpy(want + end + 1000, chunk, 32);
	end += 1032;
	ck_assert_int_eq(f->pMethods->xRead(f, got, (int)end, 0), SQLITE_OK);
	ck_assert_int_eq(memcmp(got, want, (size_t)end), 0);
	/* A truncate cuts what was buffered too. */
	memset(chunk, 'q', 4096);
	ck_assert_int_eq(f->pMethods->xWrite(f, chunk, 4096, end), SQLITE_OK);
	ck_assert_int_eq(f->pMethods->xTruncate(f, 5000), SQLITE_OK);
	ck_assert_int_eq(f->pMethods->xFileSize(f, &size), SQLITE_OK);
	ck_assert_int_eq(size, 5000);
	ck_assert_int_eq(f->pMethods->xRead(f, got, 5000, 0), SQLITE_OK);
	ck_assert_int_eq(memcmp(got, want, 5000), 0);
	/* Close writes out what is left. */
	ck_assert_int_eq(f->pMethods->xWrite(f, chunk, 4096, 5000), SQLITE_OK);
	ck_assert_int_eq(f->pMethods->xClose(f), SQLITE_OK);
	memset(f, 0, (size_t)vfs->szOsFile);
	ck_assert_int_eq(vfs->xOpen(vfs, wal, f, SQLITE_OPEN_WAL | SQLITE_OPEN_READWRITE, &out_flags),
			 SQLITE_OK);
	ck_assert_int_eq(f->pMethods->xFileSize(f, &size), SQLITE_OK);
	ck_assert_int_eq(size, 9096);
	ck_assert_int_eq(f->pMethods->xRead(f, got, 4096, 5000), SQLITE_OK);
	ck_assert_int_eq(memcmp(got, chunk, 4096), 0);
	ck_assert_int_eq(f->pMethods->xClose(f), SQLITE_OK);
	free(f);
}
END_TEST

/* What a commit frame leaves in the file at once: the WAL read with plain
 * pread(), not through the VFS (whose reads would flush the buffer). */
static size_t file_bytes(const char *path, unsigned char *out, size_t cap)
{
	FILE *fp = fopen(path, "rb");
	size_t n;

	ck_assert_ptr_nonnull(fp);
	n = fread(out, 1, cap, fp);
	fclose(fp);
	return n;
}

START_TEST(commit_frame_reaches_the_file)
{
	sqlite3_vfs *vfs;
	sqlite3_file *f;
	sqlite3 *db;
	char wal[TMPDIR_FILE_MAX + 8];
	static unsigned char header[24], page[4096], got[16384];
	int out_flags;

	ck_assert_int_eq(walbuf_register(), 0);
	vfs = sqlite3_vfs_find(WALBUF_VFS_NAME);
	db = open_writer("normal");
	db_close(db);
	snprintf(wal, sizeof(wal), "%s-wal", db_path);
	unlink(wal);
	f = calloc(1, (size_t)vfs->szOsFile);
	ck_assert_int_eq(vfs->xOpen(vfs, wal, f,
				    SQLITE_OPEN_WAL | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				    &out_flags),
			 SQLITE_OK);
	/* A frame that ends no commit stays in the buffer... */
	memset(page, 'p', sizeof(page));
	ck_assert_int_eq(f->pMethods->xWrite(f, header, 24, 0), SQLITE_OK);
	ck_assert_int_eq(f->pMethods->xWrite(f, page, 4096, 24), SQLITE_OK);
	ck_assert_uint_eq(file_bytes(wal, got, sizeof(got)), 0);
	/* ...and one whose header carries the database size after a commit
	 * takes everything before it to the file as its page is written. */
	header[7] = 3;
	ck_assert_int_eq(f->pMethods->xWrite(f, header, 24, 4120), SQLITE_OK);
	ck_assert_uint_eq(file_bytes(wal, got, sizeof(got)), 0);
	ck_assert_int_eq(f->pMethods->xWrite(f, page, 4096, 4144), SQLITE_OK);
	ck_assert_uint_eq(file_bytes(wal, got, sizeof(got)), 8240);
	ck_assert_int_eq(memcmp(got + 4144, page, 4096), 0);
	ck_assert_int_eq(got[4120 + 7], 3);
	ck_assert_int_eq(f->pMethods->xClose(f), SQLITE_OK);
	free(f);
}
END_TEST

/* What the commit hook saw each time it ran. */
struct hook_seen {
	sqlite3 *reader;
	int calls;
	int rows_then[8];
	bool die; /* end the process inside the hook, before the sync */
};

static void hook_note(void *arg)
{
	struct hook_seen *h = arg;

	if (h->die)
		_exit(0);
	if (h->calls < 8)
		h->rows_then[h->calls] = testdb_int(h->reader, "SELECT count(*) FROM t");
	h->calls++;
}

START_TEST(hook_runs_before_the_commit_shows)
{
	struct hook_seen seen = { 0 };
	sqlite3 *db = open_writer("full");

	ck_assert_int_eq(db_open(db_path, false, NULL, &seen.reader), 0);
	ck_assert_int_eq(walbuf_on_commit_written(db, (struct walbuf_hook){ hook_note, &seen }), 0);
	for (int i = 0; i < 5; i++) {
		insert_rows(db, i * 100, (i + 1) * 100);
		/* Once per commit, while other connections still saw the rows of
		 * the commits before it only; after the commit they see it. */
		ck_assert_int_eq(seen.calls, i + 1);
		ck_assert_int_eq(seen.rows_then[i], i * 100);
		expect_rows(seen.reader, (i + 1) * 100);
	}
	ck_assert_int_eq(walbuf_on_commit_written(db, (struct walbuf_hook){ NULL, NULL }), 0);
	insert_rows(db, 500, 600);
	ck_assert_int_eq(seen.calls, 5);
	db_close(seen.reader);
	db_close(db);
}
END_TEST

/* The hook's promise: a crash of the process from the hook on keeps the
 * commit, because its frames are already in the file. */
START_TEST(crash_in_hook_keeps_the_commit)
{
	pid_t pid = fork();
	int status;
	sqlite3 *db;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct hook_seen seen = { 0 };

		db = open_writer("full");
		insert_rows(db, 0, 300);
		seen.die = true;
		if (walbuf_on_commit_written(db, (struct walbuf_hook){ hook_note, &seen }))
			_exit(2);
		insert_rows(db, 300, 700);
		_exit(3); /* the hook never ran */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(db_open(db_path, false, NULL, &db), 0);
	expect_rows(db, 700);
	expect_intact(db);
	db_close(db);
}
END_TEST

START_TEST(hook_needs_a_sync_and_the_buffer)
{
	struct hook_seen seen = { 0 };
	sqlite3 *db = open_writer("normal"), *ro;

	/* NORMAL: no sync at commit, so nothing to run beside (a checkpoint
	 * syncs the WAL later, as closing does). */
	ck_assert_int_eq(walbuf_on_commit_written(db, (struct walbuf_hook){ hook_note, &seen }), 0);
	insert_rows(db, 0, 100);
	insert_rows(db, 100, 200);
	ck_assert_int_eq(seen.calls, 0);
	ck_assert_int_eq(walbuf_on_commit_written(db, (struct walbuf_hook){ NULL, NULL }), 0);
	db_close(db);
	/* A reader, and a writer without the buffer, cannot take one. */
	ck_assert_int_eq(db_open(db_path, false, NULL, &ro), 0);
	expect_rows(ro, 200);
	ck_assert_int_ne(walbuf_on_commit_written(ro, (struct walbuf_hook){ hook_note, &seen }), 0);
	db_close(ro);
	db_use_wal_buffer(false);
	db = open_writer("full");
	ck_assert_int_ne(walbuf_on_commit_written(db, (struct walbuf_hook){ hook_note, &seen }), 0);
	db_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("walbuf");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, writer_is_buffered, 0, 2);
	tcase_add_test(tc, others_are_not_buffered);
	tcase_add_loop_test(tc, reader_sees_each_commit, 0, 2);
	tcase_add_test(tc, spill_and_rewrite);
	tcase_add_loop_test(tc, crash_after_commit_keeps_it, 0, 2);
	tcase_add_test(tc, commit_frame_reaches_the_file);
	tcase_add_test(tc, crash_inside_transaction_leaves_nothing);
	tcase_add_test(tc, checkpoints_and_reopen);
	tcase_add_test(tc, file_semantics);
	tcase_add_test(tc, hook_runs_before_the_commit_shows);
	tcase_add_test(tc, crash_in_hook_keeps_the_commit);
	tcase_add_test(tc, hook_needs_a_sync_and_the_buffer);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
