/*
 * test_maint.c - checks stored/maint.c against a real database (WAL, in a
 * private mkdtemp() directory), as the writer runs it:
 *
 *   - CHECKPOINT moves every WAL frame into the database and empties the
 *     WAL (no reader holds it here), reporting busy 0;
 *   - VACUUM leaves the events as they were and the WAL empty;
 *   - BAN adds a row (values[0] 1), banning again only replaces the reason
 *     (values[0] 0); UNBAN removes it (1), and again finds nothing (0);
 *   - DELETE removes exactly the events matching any of its filters, with
 *     their tags, and reports how many;
 *   - an op the writer does not run (IMPORT, LIST_SUBS) is ERR_INVAL.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/log.h"
#include "../../stored/db.h"
#include "../../stored/ingest.h"
#include "../../stored/jobs.h"
#include "../../stored/maint.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_maint")
static char db_path[TMPDIR_FILE_MAX];
static sqlite3 *db;

static void setup(void)
{
	log_set_level(LOG_ERROR);
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
}

static void teardown(void)
{
	db_close(db);
	testdb_unlink(db_path);
}

static uint64_t wal_size(void)
{
	char path[sizeof(db_path) + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s-wal", db_path);
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Stores n events of kinds 1 and 7 alternately, by authors 1 and 2
 * alternately in pairs, each with a `t` tag, through ingest. */
static void populate(int n)
{
	struct ingest *in = ingest_new(db);
	struct event_tag tag = { 't', 1, "x" };

	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < n; i++) {
		uint8_t id[32] = { (uint8_t)i, (uint8_t)(i >> 8), 1 };
		uint8_t pk[32] = { (uint8_t)(1 + i / 2 % 2) }, sig[64] = { 0 };
		struct event ev;
		const char *why;
		int64_t seq;

		ck_assert_int_eq(
		    event_build(&ev, id, pk, sig, 1000 + i, i % 2 ? 7 : 1, &tag, 1, "{}", 2), 0);
		ck_assert_int_eq(ingest_event(in, &ev, &seq, &why), INGEST_STORED);
		event_free(&ev);
	}
	ck_assert_int_eq(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	ingest_free(in);
}

static struct admin_job *run(struct admin_job *job)
{
	maint_run(db, job);
	return job;
}

START_TEST(test_checkpoint)
{
	struct admin_job *job;

	populate(50);
	ck_assert_uint_gt(wal_size(), 0);
	job = run(admin_job_new(ADMIN_OP_CHECKPOINT, 1, 0));
	ck_assert_int_eq(job->rc, 0);
	ck_assert_int_eq(job->values[0], 0);
	ck_assert_uint_eq(wal_size(), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 50);
	admin_job_release(job);
}
END_TEST

START_TEST(test_vacuum)
{
	struct admin_job *job;

	populate(200);
	ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM events WHERE kind = 7", NULL, NULL, NULL),
			 SQLITE_OK);
	job = run(admin_job_new(ADMIN_OP_VACUUM, 1, 0));
	ck_assert_int_eq(job->rc, 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 100);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE kind = 7"), 0);
	ck_assert_uint_eq(wal_size(), 0);
	admin_job_release(job);
}
END_TEST

static struct admin_job *ban_job(enum admin_op op, uint8_t first, const char *reason)
{
	struct admin_job *job = admin_job_new(op, 1, 0);

	job->pubkey[0] = first;
	snprintf(job->reason, sizeof(job->reason), "%s", reason);
	job->now = 1234;
	return run(job);
}

/* Runs op and returns values[0] (rc must be 0). */
static int64_t ban_op(enum admin_op op, uint8_t first, const char *reason)
{
	struct admin_job *job = ban_job(op, first, reason);
	int64_t v = job->values[0];

	ck_assert_int_eq(job->rc, 0);
	admin_job_release(job);
	return v;
}

START_TEST(test_ban_unban)
{
	ck_assert_int_eq(ban_op(ADMIN_OP_BAN, 0xaa, "spam"), 1);
	ck_assert_int_eq(ban_op(ADMIN_OP_BAN, 0xbb, "other"), 1);
	ck_assert_int_eq(ban_op(ADMIN_OP_BAN, 0xaa, "still spam"), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM banned_pubkeys"), 2);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM banned_pubkeys WHERE reason = 'still spam'"
				 " AND created_at = 1234 AND length(pubkey) = 32"),
			 1);
	ck_assert_int_eq(ban_op(ADMIN_OP_UNBAN, 0xaa, ""), 1);
	ck_assert_int_eq(ban_op(ADMIN_OP_UNBAN, 0xaa, ""), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM banned_pubkeys"), 1);
}
END_TEST

/* Kind 7 of author 1 OR anything of author 2: the union, each event once. */
START_TEST(test_delete)
{
	struct admin_job *job = admin_job_new(ADMIN_OP_DELETE, 1, 0);
	static uint8_t author1[1][32] = { { 1 } }, author2[1][32] = { { 2 } };
	static uint32_t kind7[1] = { 7 };

	populate(40); /* 10 of each (author, kind) pair */
	job->filters = calloc(2, sizeof(struct filter));
	job->nfilters = 2;
	filter_init(&job->filters[0]);
	filter_init(&job->filters[1]);
	job->filters[0].authors = malloc(32);
	memcpy(job->filters[0].authors, author1, 32);
	job->filters[0].nauthors = 1;
	job->filters[0].has_authors = true;
	job->filters[0].kinds = malloc(sizeof(uint32_t));
	job->filters[0].kinds[0] = kind7[0];
	job->filters[0].nkinds = 1;
	job->filters[0].has_kinds = true;
	job->filters[1].authors = malloc(32);
	memcpy(job->filters[1].authors, author2, 32);
	job->filters[1].nauthors = 1;
	job->filters[1].has_authors = true;
	run(job);
	ck_assert_int_eq(job->rc, 0);
	ck_assert_int_eq(job->values[0], 30);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 10);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE kind = 1 AND"
				 " substr(pubkey, 1, 1) = x'01'"),
			 10);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 10);
	admin_job_release(job);
}
END_TEST

START_TEST(test_not_for_the_writer)
{
	struct admin_job *job = run(admin_job_new(ADMIN_OP_IMPORT, 0, 0));

	ck_assert_int_eq(job->rc, ERR_INVAL);
	admin_job_release(job);
	job = run(admin_job_new(ADMIN_OP_LIST_SUBS, 1, 0));
	ck_assert_int_eq(job->rc, ERR_INVAL);
	admin_job_release(job);
}
END_TEST

static Suite *maint_suite(void)
{
	Suite *s = suite_create("maint");
	TCase *tc = tcase_create("jobs");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_checkpoint);
	tcase_add_test(tc, test_vacuum);
	tcase_add_test(tc, test_ban_unban);
	tcase_add_test(tc, test_delete);
	tcase_add_test(tc, test_not_for_the_writer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(maint_suite());
}
