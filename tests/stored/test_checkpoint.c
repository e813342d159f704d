/*
 * test_checkpoint.c - checks stored/checkpoint.c on a real WAL database, as
 * the writer uses it (wal hook installed, so no automatic checkpoint):
 *
 *   - below the wake threshold nothing is checkpointed: the database file
 *     stays at its initial size and the thread has not run;
 *   - once the WAL has grown past it, the thread runs and copies the pages
 *     into the database file (which grows to hold the rows), without the
 *     writer waiting for it;
 *   - checkpointer_after_commit() asks the writer to checkpoint itself only
 *     past the hard bound (the frames that fit in the size given to
 *     checkpointer_limit_wal), and a writer checkpoint there lets the WAL
 *     start over (the next commits report a small WAL); a WAL that grew
 *     past the bound meanwhile is cut back to it in the file; a bound too
 *     small for the thread to work under is refused; the thread is not
 *     woken in the last stretch before the bound;
 *   - an idle writer's word (checkpointer_idle) has the thread copy what
 *     is below the threshold, once per growth, and the WAL then starts over;
 *   - stopping with nothing to do is clean.
 */
#include <check.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "../../common/err.h"
#include "../../stored/checkpoint.h"
#include "../../stored/db.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_checkpoint")
static char db_path[TMPDIR_FILE_MAX];
static sqlite3 *db;
static int wal_pages;
static sqlite3_stmt *insert;

static int note_pages(void *arg, sqlite3 *conn, const char *name, int pages)
{
	wal_pages = pages;
	return SQLITE_OK;
}

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE big(b BLOB)", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "INSERT INTO big VALUES(zeroblob(3500))", -1, &insert,
					    NULL),
			 SQLITE_OK);
	sqlite3_wal_hook(db, note_pages, NULL);
	wal_pages = 0;
}

static void teardown(void)
{
	sqlite3_finalize(insert);
	db_close(db);
	testdb_unlink(db_path);
}

/* One transaction of n rows of about a page each. */
static void commit_rows(int n)
{
	ck_assert_int_eq(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(sqlite3_step(insert), SQLITE_DONE);
		sqlite3_reset(insert);
	}
	ck_assert_int_eq(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
}

static long db_file_size(void)
{
	struct stat st;

	ck_assert_int_eq(stat(db_path, &st), 0);
	return (long)st.st_size;
}

/* Waits up to 10 s for the thread to have run at least n times. */
static void wait_runs(struct checkpointer *cp, unsigned long n)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 1000 && checkpointer_runs(cp) < n; i++)
		nanosleep(&pause, NULL);
	ck_assert_uint_ge(checkpointer_runs(cp), n);
}

START_TEST(quiet_below_threshold)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);
	long before = db_file_size();

	ck_assert_ptr_nonnull(cp);
	for (int i = 0; i < 10; i++) {
		commit_rows(50);
		ck_assert(!checkpointer_after_commit(cp, wal_pages));
	}
	ck_assert_int_lt(wal_pages, 1000);
	checkpointer_stop(cp);
	/* Nothing woke the thread, so the rows are only in the WAL (the
	 * checkpointer's own close may not checkpoint: the writer is open). */
	ck_assert_int_eq(db_file_size(), before);
}
END_TEST

START_TEST(wakes_and_copies)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);

	ck_assert_ptr_nonnull(cp);
	while (wal_pages < 4200) {
		commit_rows(100);
		ck_assert(!checkpointer_after_commit(cp, wal_pages));
	}
	wait_runs(cp, 1);
	checkpointer_stop(cp);
	/* The pages it was woken for are in the database now (fewer pages
	 * than WAL frames: a page committed twice is copied once). */
	ck_assert_int_gt(db_file_size(), 3000L * 4096);
}
END_TEST

/* An idle writer lets the thread copy what it was not woken for, once per
 * growth of the WAL, and the next commit starts the WAL over. */
START_TEST(idle_copies_the_rest)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);
	long before = db_file_size();

	ck_assert_ptr_nonnull(cp);
	commit_rows(50);
	ck_assert(!checkpointer_after_commit(cp, wal_pages));
	ck_assert_int_lt(wal_pages, 4000); /* below the wake threshold */
	checkpointer_idle(cp, wal_pages);
	wait_runs(cp, 1);
	ck_assert_int_gt(db_file_size(), before);
	/* Nothing new since: no second pass. */
	checkpointer_idle(cp, wal_pages);
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	nanosleep(&pause, NULL);
	ck_assert_uint_eq(checkpointer_runs(cp), 1);
	commit_rows(5);
	ck_assert_int_lt(wal_pages, 50); /* started over */
	checkpointer_stop(cp);
}
END_TEST

static long wal_file_size(void)
{
	char wal[TMPDIR_FILE_MAX + 8];
	struct stat st;

	snprintf(wal, sizeof(wal), "%s-wal", db_path);
	ck_assert_int_eq(stat(wal, &st), 0);
	return (long)st.st_size;
}

/* The frames of 8 KiB pages that fit in 64 MiB of WAL file (a 32-byte file
 * header, 24 bytes per frame), and the file's size when holding them. */
#define BOUND_FRAMES ((64L * 1024 * 1024 - 32) / (8192 + 24))
#define BOUND_BYTES (BOUND_FRAMES * (8192 + 24) + 32)

/* Commits until the writer is asked to checkpoint itself, which must be
 * exactly from the frames that fit in mib MiB, not before. */
static void commit_to_bound(struct checkpointer *cp, long mib)
{
	long frames = (mib * 1024 * 1024 - 32) / (8192 + 24);
	bool asked = false;

	ck_assert_int_eq(checkpointer_limit_wal(cp, db, mib * 1024 * 1024), 0);
	for (int i = 0; i < 400 && !asked; i++) {
		commit_rows(100);
		asked = checkpointer_after_commit(cp, wal_pages);
		ck_assert_int_eq(asked, wal_pages >= frames);
	}
	ck_assert(asked);
}

START_TEST(hard_bound_lets_the_wal_restart)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);
	long bound = BOUND_BYTES;

	ck_assert_ptr_nonnull(cp);
	commit_to_bound(cp, 64);
	ck_assert_int_ge(wal_pages, BOUND_FRAMES);
	/* As when the writer's checkpoints were busy for a while. */
	for (int i = 0; i < 10; i++)
		commit_rows(100);
	ck_assert_int_gt(wal_file_size(), bound);
	/* What the writer does then (stored/writer.c); busy while the thread
	 * is checkpointing, so the writer tries again after its next commit. */
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int rc = SQLITE_BUSY;
	for (int i = 0; i < 1000 && rc == SQLITE_BUSY; i++) {
		rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (rc == SQLITE_BUSY)
			nanosleep(&pause, NULL);
	}
	ck_assert_int_eq(rc, SQLITE_OK);
	commit_rows(10);
	ck_assert_int_lt(wal_pages, 100);
	ck_assert_int_le(wal_file_size(), bound);
	ck_assert(!checkpointer_after_commit(cp, wal_pages));
	checkpointer_stop(cp);
}
END_TEST

/* The thread is not woken within its wake threshold (4,000 pages) of the
 * bound: that pass would hold off the writer's checkpoint at the bound.
 * Under 48 MiB of 8 KiB pages (~6,100 frames) it is never woken, and the
 * writer's own checkpoint lets the WAL start over. */
START_TEST(no_wake_just_below_the_bound)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);

	ck_assert_ptr_nonnull(cp);
	commit_to_bound(cp, 48);
	ck_assert_int_gt(wal_pages, 4000);
	ck_assert_uint_eq(checkpointer_runs(cp), 0);
	ck_assert_int_eq(sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL),
			 SQLITE_OK);
	commit_rows(10);
	ck_assert_int_lt(wal_pages, 100);
	checkpointer_stop(cp);
}
END_TEST

/* A bound that leaves the thread no room to work before the writer must
 * is refused, and the default bound stays. */
START_TEST(bound_too_small)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);

	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(checkpointer_limit_wal(cp, db, 16L * 1024 * 1024), ERR_INVAL);
	ck_assert(!checkpointer_after_commit(cp, 16383));
	ck_assert(checkpointer_after_commit(cp, 16384));
	checkpointer_stop(cp);
}
END_TEST

START_TEST(stop_idle)
{
	struct checkpointer *cp = checkpointer_start(db_path, "normal", 0);

	ck_assert_ptr_nonnull(cp);
	ck_assert_uint_eq(checkpointer_runs(cp), 0);
	checkpointer_stop(cp);
	checkpointer_stop(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("checkpoint");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, quiet_below_threshold);
	tcase_add_test(tc, wakes_and_copies);
	tcase_add_test(tc, idle_copies_the_rest);
	tcase_add_test(tc, hard_bound_lets_the_wal_restart);
	tcase_add_test(tc, no_wake_just_below_the_bound);
	tcase_add_test(tc, bound_too_small);
	tcase_add_test(tc, stop_idle);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
