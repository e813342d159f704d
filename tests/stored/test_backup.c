/*
 * test_backup.c - checks stored/backup.c on real database files in a
 * private mkdtemp() directory: a backup taken while another connection
 * commits all the time is exactly the snapshot it began with (integrity
 * check passes, its events and newest seq are the ones reported, and
 * commits overlapped the copy), it says it holds the WAL only while it
 * runs and checkpoints the WAL that grew meanwhile, the partial file is gone
 * once it is done, and refused destinations (relative, existing, in a
 * missing directory, in the database's own directory, an existing partial
 * file) leave nothing behind; stopping a copy part way leaves neither the
 * partial file nor its journal.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/log.h"
#include "../../stored/backup.h"
#include "../../stored/db.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_backup")

static char db_path[TMPDIR_FILE_MAX], dest[TMPDIR_FILE_MAX + 32];

/* Copies go to a directory of their own (never the database's). */
static void setup(void)
{
	char copies[TMPDIR_FILE_MAX];

	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	snprintf(copies, sizeof(copies), "%s/copies", tmp_dir);
	mkdir(copies, 0700);
	snprintf(dest, sizeof(dest), "%s/%ld.db", copies, (long)getpid());
	log_set_level(LOG_ERROR);
}

static void teardown(void)
{
	testdb_unlink(db_path);
	testdb_unlink(dest);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void insert_events(sqlite3 *db, int n)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < %d)"
		 " INSERT INTO events(id, pubkey, created_at, kind, json)"
		 " SELECT randomblob(32), randomblob(32), 1700000000 + i, 1, printf('%%.2000c', 'x')"
		 " FROM k", n);
	testdb_exec(db, sql);
}

static sqlite3 *open_writer(void)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, true, "full", &db), 0);
	return db;
}

static void wait_done(struct backup *b, struct backup_status *st)
{
	for (int i = 0; i < 60000; i++) {
		backup_status(b, st);
		if (st->state != BACKUP_RUNNING)
			return;
		usleep(1000);
	}
	ck_abort_msg("the backup did not end within a minute");
}

struct committer {
	struct backup *b;
	atomic_bool quit;
	int during; /* commits that began and ended while the copy ran */
};

/* Commits 20 events at a time until told to quit. */
static void *committer_main(void *arg)
{
	struct committer *c = arg;
	sqlite3 *db = open_writer();
	struct backup_status st;

	/* As stored's writer: no checkpoint of its own (writer.c). */
	testdb_exec(db, "PRAGMA wal_autocheckpoint = 0");
	while (!atomic_load(&c->quit)) {
		bool before, after;

		backup_status(c->b, &st);
		before = st.state == BACKUP_RUNNING;
		testdb_exec(db, "BEGIN");
		insert_events(db, 20);
		testdb_exec(db, "COMMIT");
		backup_status(c->b, &st);
		after = st.state == BACKUP_RUNNING;
		c->during += before && after;
	}
	sqlite3_close(db);
	return NULL;
}

START_TEST(a_backup_is_the_snapshot_it_began_with)
{
	sqlite3 *db = open_writer(), *copy = NULL;
	struct backup *b = backup_new(db_path, 0, 1); /* a page a step: a long copy */
	struct committer c = { .b = b };
	struct backup_status st;
	char partial[sizeof(dest) + 16], why[256] = "";
	pthread_t thread;

	insert_events(db, 20000); /* ~40 MB */
	ck_assert_int_eq(pthread_create(&thread, NULL, committer_main, &c), 0);
	usleep(20000);
	ck_assert(!backup_holds_wal(b));
	ck_assert_int_eq(backup_start(b, dest, why, sizeof(why)), 0);
	ck_assert(backup_holds_wal(b));
	wait_done(b, &st);
	ck_assert(!backup_holds_wal(b));
	atomic_store(&c.quit, true);
	pthread_join(thread, NULL);
	ck_assert_msg(st.state == BACKUP_DONE, "backup failed: %s", st.error);
	ck_assert_msg(c.during > 0, "no commit overlapped the copy: the test proves nothing");
	ck_assert_str_eq(st.path, dest);
	ck_assert_uint_ge(st.events, 20000);
	ck_assert_uint_eq(st.pages_done, st.pages_total);
	ck_assert_uint_gt(st.bytes, 0);
	/* The WAL that grew while the copy held its snapshot (no one else
	 * checkpoints here) was copied into the database as it ended. */
	ck_assert_uint_gt(st.wal_checkpointed, 0);
	/* The source went on past the snapshot... */
	ck_assert_int_gt(testdb_int(db, "SELECT count(*) FROM events"), (int64_t)st.events);
	/* ...and the copy is the snapshot, whole. */
	ck_assert_int_eq(sqlite3_open_v2(dest, &copy, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(testdb_int(copy, "SELECT count(*) FROM events"), (int64_t)st.events);
	ck_assert_int_eq(testdb_int(copy, "SELECT max(seq) FROM events"), (int64_t)st.max_seq);
	ck_assert_int_eq(testdb_int(copy, "SELECT count(*) FROM events WHERE seq > (SELECT max(seq)"
					  " FROM events) - 20"), 20);
	ck_assert_int_eq(testdb_int(copy, "SELECT (SELECT integrity_check FROM pragma_integrity_check)"
					  " = 'ok'"), 1);
	sqlite3_close(copy);
	snprintf(partial, sizeof(partial), "%s.partial", dest);
	ck_assert(!file_exists(partial));
	sqlite3_close(db);
	backup_free(b);
}
END_TEST

START_TEST(refused_destinations_leave_nothing)
{
	sqlite3 *db = open_writer();
	struct backup *b = backup_new(db_path, 0, 64);
	struct backup_status st;
	char path[sizeof(dest) + 32], why[256];
	FILE *f;

	insert_events(db, 10);
	ck_assert_int_eq(backup_start(b, "relative/copy.db", why, sizeof(why)), ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(why, "absolute"));
	snprintf(path, sizeof(path), "%s/missing/copy.db", tmp_dir);
	ck_assert_int_eq(backup_start(b, path, why, sizeof(why)), ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(why, "not one stored can reach"));
	/* Never over an existing file: the database itself, for one. */
	ck_assert_int_eq(backup_start(b, "/etc/passwd", why, sizeof(why)), ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(why, "exists already"));
	/* Nor beside the database, where the names are SQLite's and stored's. */
	snprintf(path, sizeof(path), "%s/copy.db", tmp_dir);
	ck_assert_int_eq(backup_start(b, path, why, sizeof(why)), ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(why, "data directory"));
	/* Nor over another backup's partial file. */
	snprintf(path, sizeof(path), "%s.partial", dest);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(backup_start(b, dest, why, sizeof(why)), ERR_INVAL);
	ck_assert(!file_exists(dest));
	unlink(path);
	backup_status(b, &st);
	ck_assert_int_eq(st.state, BACKUP_NONE);
	/* And then a good one. */
	ck_assert_int_eq(backup_start(b, dest, why, sizeof(why)), 0);
	wait_done(b, &st);
	ck_assert_int_eq(st.state, BACKUP_DONE);
	ck_assert_uint_eq(st.events, 10);
	/* A second backup to the same name is refused: it exists now. */
	ck_assert_int_eq(backup_start(b, dest, why, sizeof(why)), ERR_INVAL);
	sqlite3_close(db);
	backup_free(b);
}
END_TEST

START_TEST(a_backup_stopped_part_way_leaves_nothing)
{
	sqlite3 *db = open_writer();
	struct backup *b = backup_new(db_path, 0, 1);
	char partial[sizeof(dest) + 16], journal[sizeof(dest) + 32], why[256];
	struct backup_status st = { 0 };

	insert_events(db, 20000);
	ck_assert_int_eq(backup_start(b, dest, why, sizeof(why)), 0);
	for (int i = 0; i < 300000 && st.pages_done == 0; i++) { /* 30 s at least: a guard */
		usleep(100);
		backup_status(b, &st);
	}
	ck_assert_int_eq(st.state, BACKUP_RUNNING);
	ck_assert_uint_gt(st.pages_done, 0);
	ck_assert_uint_lt(st.pages_done, st.pages_total);
	snprintf(partial, sizeof(partial), "%s.partial", dest);
	snprintf(journal, sizeof(journal), "%s.partial-journal", dest);
	ck_assert(file_exists(journal)); /* the copy's transaction is open */
	backup_free(b); /* stored stops */
	ck_assert(!file_exists(partial));
	ck_assert(!file_exists(journal));
	ck_assert(!file_exists(dest));
	sqlite3_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backup");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_backup_is_the_snapshot_it_began_with);
	tcase_add_test(tc, refused_destinations_leave_nothing);
	tcase_add_test(tc, a_backup_stopped_part_way_leaves_nothing);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
