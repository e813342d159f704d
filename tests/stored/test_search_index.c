/*
 * test_search_index.c - checks stored/search_index.c against a real SQLite
 * database.
 *
 * Events are written straight into the events table with a JSON text of
 * their own choosing (the index reads only seq and json), committed, and
 * reported to the index the way the writer does (search_index_join_commit
 * before a COMMIT, search_index_committed after it).
 * What the index holds is read back with FTS5 MATCH queries, so every
 * expectation is "which seqs does this word find", written out by hand.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../stored/db.h"
#include "../../stored/search_index.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_search_index")

static char db_path[TMPDIR_FILE_MAX];
static sqlite3 *db;
static struct search_watermark wm;

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	ck_assert_int_eq(search_watermark_init(&wm), 0);
}

static void teardown(void)
{
	db_close(db);
	search_watermark_destroy(&wm);
	testdb_unlink(db_path);
}

/* Commits an event seq whose content is the JSON string literal content
 * (quotes included, escapes as a client would send them). */
static void store(int64_t seq, const char *content)
{
	char json[512];
	sqlite3_stmt *st;

	snprintf(json, sizeof(json), "{\"id\":\"x\",\"kind\":1,\"tags\":[],\"content\":%s}", content);
	ck_assert_int_eq(sqlite3_prepare_v2(db,
					    "INSERT INTO events(seq, id, pubkey, created_at, kind, json)"
					    " VALUES(?1, randomblob(32), zeroblob(32), 1, 1, ?2)",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_int64(st, 1, seq);
	sqlite3_bind_text(st, 2, json, -1, SQLITE_TRANSIENT);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

/* The seqs the index finds for an FTS5 query, ascending, as "1 3". */
static const char *found(const char *match)
{
	static char out[256];
	sqlite3_stmt *st;
	size_t len = 0;

	ck_assert_int_eq(sqlite3_prepare_v2(db,
					    "SELECT rowid FROM events_fts WHERE events_fts MATCH ?1"
					    " ORDER BY rowid",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%lld", len ? " " : "",
					(long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return out;
}

static int64_t text_rows(void)
{
	return testdb_int(db, "SELECT count(*) FROM events_fts");
}

START_TEST(test_commits_are_indexed_later_in_one_batch)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);

	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	store(1, "\"alpha one\"");
	store(2, "\"\"");
	store(3, "\"beta two alpha\"");
	search_index_committed(x, 3);
	/* Not yet: nothing is due for a minute and only 3 of 100 wait. */
	ck_assert_int_eq(text_rows(), 0);
	ck_assert_int_gt(search_index_due_in_ms(x), 50000);
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("alpha"), "1 3");
	ck_assert_str_eq(found("beta"), "3");
	ck_assert_int_eq(text_rows(), 2); /* the empty content has no row */
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	search_index_free(x);
}
END_TEST

START_TEST(test_content_is_decoded)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);

	ck_assert_ptr_nonnull(x);
	store(1, "\"caf\\u00e9 \\\"quoted\\\" new\\nline\"");
	search_index_committed(x, 1);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("caf\xc3\xa9"), "1");
	ck_assert_str_eq(found("quoted"), "1");
	ck_assert_str_eq(found("line"), "1");
	ck_assert_str_eq(found("u00e9"), "");
	search_index_free(x);
}
END_TEST

START_TEST(test_batch_bounds_each_run)
{
	struct search_index *x = search_index_new(db, &wm, 2, 60000);

	ck_assert_ptr_nonnull(x);
	store(1, "\"word\"");
	search_index_committed(x, 1);
	ck_assert_int_gt(search_index_due_in_ms(x), 0);
	for (int64_t seq = 2; seq <= 5; seq++)
		store(seq, "\"word\"");
	search_index_committed(x, 5);
	ck_assert_int_eq(search_index_due_in_ms(x), 0); /* a full batch waits */
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("word"), "1 2");
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert_int_eq(search_index_catch_up(x), 0);
	ck_assert_str_eq(found("word"), "1 2 3 4 5");
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	search_index_free(x);
}
END_TEST

START_TEST(test_a_search_makes_it_due_at_once)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);
	int64_t seq = 0;

	ck_assert_ptr_nonnull(x);
	store(1, "\"needle\"");
	search_index_committed(x, 1);
	ck_assert_int_gt(search_index_due_in_ms(x), 0);
	ck_assert(!search_watermark_want(&wm, &seq)); /* 0: what is committed */
	ck_assert_int_eq(seq, 1);
	ck_assert_int_eq(search_index_due_in_ms(x), 0);
	ck_assert(!search_watermark_wait(&wm, 1, 20)); /* nobody indexes: times out */
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert(search_watermark_wait(&wm, 1, 0));
	seq = 1;
	ck_assert(search_watermark_want(&wm, &seq));
	ck_assert_str_eq(found("needle"), "1");
	search_index_free(x);
}
END_TEST

START_TEST(test_deleted_before_its_turn_is_skipped)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);

	ck_assert_ptr_nonnull(x);
	store(1, "\"kept\"");
	store(2, "\"gone kept\"");
	search_index_committed(x, 2);
	/* The events_cleanup trigger deletes a text row that is not there. */
	ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM events WHERE seq = 2", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("kept"), "1");
	ck_assert_str_eq(found("gone"), "");
	search_index_free(x);
}
END_TEST

/* A restart (or crash) loses only the writer's memory: the next index
 * resumes after the highest indexed rowid, without indexing anything
 * twice (FTS5 refuses a second row with the same rowid). */
START_TEST(test_resumes_after_the_highest_indexed_row)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);

	ck_assert_ptr_nonnull(x);
	store(1, "\"old\"");
	store(2, "\"old\"");
	search_index_committed(x, 2);
	ck_assert_int_eq(search_index_run(x), 0);
	store(3, "\"new\"");
	store(4, "\"\"");
	store(5, "\"new\"");
	search_index_committed(x, 5);
	search_index_free(x); /* stopped before indexing 3-5 */

	x = search_index_new(db, &wm, 100, 60000);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert_int_eq(search_index_catch_up(x), 0);
	ck_assert_str_eq(found("old"), "1 2");
	ck_assert_str_eq(found("new"), "3 5");
	search_index_free(x);
}
END_TEST

/* search_index_delay_ms = 0: the commits index their own text, so the
 * index catches up an earlier run's backlog before the first of them. */
START_TEST(test_inline_mode_catches_up_at_start)
{
	struct search_index *x;

	store(1, "\"backlog\"");
	x = search_index_new(db, &wm, 100, 0);
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(found("backlog"), "1");
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	search_index_committed(x, 2); /* what ingest.c indexed itself */
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	search_index_free(x);
}
END_TEST

static void exec_ok(const char *sql)
{
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* A commit of n events (seqs from first) of "bulk", as the writer makes
 * it: the index may join it before COMMIT. */
static void commit_with_index(struct search_index *x, int64_t first, int n)
{
	exec_ok("BEGIN IMMEDIATE");
	for (int i = 0; i < n; i++)
		store(first + i, "\"bulk\"");
	ck_assert_int_eq(search_index_join_commit(x, (size_t)n, first + n - 1), 0);
	exec_ok("COMMIT");
	search_index_committed(x, first + n - 1);
}

START_TEST(test_a_large_commit_carries_its_own_text)
{
	struct search_index *x = search_index_new(db, &wm, 4096, 60000);

	ck_assert_ptr_nonnull(x);
	store(1, "\"early\""); /* a small commit left unindexed */
	search_index_committed(x, 1);
	commit_with_index(x, 2, SEARCH_INDEX_JOIN_EVENTS);
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	ck_assert_str_eq(found("early"), "1");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events_fts WHERE events_fts MATCH 'bulk'"),
			 SEARCH_INDEX_JOIN_EVENTS);
	search_index_free(x);
}
END_TEST

START_TEST(test_a_small_commit_joins_only_for_a_search)
{
	struct search_index *x = search_index_new(db, &wm, 4096, 60000);
	int64_t seq = 0;

	ck_assert_ptr_nonnull(x);
	commit_with_index(x, 1, 3);
	ck_assert_int_eq(text_rows(), 0);
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert(!search_watermark_want(&wm, &seq)); /* a search waits for 1..3 */
	commit_with_index(x, 4, 2);
	ck_assert_str_eq(found("bulk"), "1 2 3 4 5");
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	search_index_free(x);
}
END_TEST

START_TEST(test_a_rolled_back_join_leaves_the_index_where_it_was)
{
	struct search_index *x = search_index_new(db, &wm, 4096, 60000);

	ck_assert_ptr_nonnull(x);
	exec_ok("BEGIN IMMEDIATE");
	for (int i = 1; i <= SEARCH_INDEX_JOIN_EVENTS; i++)
		store(i, "\"gone\"");
	ck_assert_int_eq(search_index_join_commit(x, SEARCH_INDEX_JOIN_EVENTS,
						  SEARCH_INDEX_JOIN_EVENTS), 0);
	exec_ok("ROLLBACK");
	search_index_rolled_back(x);
	search_index_committed(x, 0); /* the writer's next commit stored nothing */
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	store(1, "\"kept\"");
	search_index_committed(x, 1);
	ck_assert_int_eq(search_index_run(x), 0); /* seq 1 was not taken as indexed */
	ck_assert_str_eq(found("kept"), "1");
	ck_assert_str_eq(found("gone"), "");
	search_index_free(x);
}
END_TEST

/* Another thread waits for the index, as a query thread does. */
struct waiter {
	int64_t seq;
	bool covered;
};

static void *wait_for_index(void *arg)
{
	struct waiter *w = arg;

	if (!search_watermark_want(&wm, &w->seq))
		w->covered = search_watermark_wait(&wm, w->seq, 10000);
	else
		w->covered = true;
	return NULL;
}

START_TEST(test_a_waiting_thread_wakes_when_indexed)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);
	struct waiter w = { 2, false };
	pthread_t t;

	ck_assert_ptr_nonnull(x);
	store(1, "\"one\"");
	store(2, "\"two\"");
	search_index_committed(x, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_index, &w), 0);
	while (search_index_due_in_ms(x) != 0) /* until the waiter has asked */
		usleep(1000);
	ck_assert_int_eq(search_index_run(x), 0);
	pthread_join(t, NULL);
	ck_assert(w.covered);
	ck_assert_str_eq(found("two"), "2");
	search_index_free(x);
}
END_TEST

/* When the writer stops, a searcher does not wait out its time. */
START_TEST(test_stopping_releases_waiters)
{
	struct search_index *x = search_index_new(db, &wm, 100, 60000);
	struct waiter w = { 1, false };
	pthread_t t;

	ck_assert_ptr_nonnull(x);
	store(1, "\"one\"");
	search_index_committed(x, 1);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_index, &w), 0);
	while (search_index_due_in_ms(x) != 0)
		usleep(1000);
	search_index_free(x);
	pthread_join(t, NULL);
	ck_assert(w.covered); /* nothing to wait for: the search runs on what is there */
	ck_assert_int_eq(text_rows(), 0);
}
END_TEST

static Suite *search_index_suite(void)
{
	Suite *s = suite_create("search_index");
	TCase *tc = tcase_create("search_index");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_commits_are_indexed_later_in_one_batch);
	tcase_add_test(tc, test_content_is_decoded);
	tcase_add_test(tc, test_batch_bounds_each_run);
	tcase_add_test(tc, test_a_search_makes_it_due_at_once);
	tcase_add_test(tc, test_deleted_before_its_turn_is_skipped);
	tcase_add_test(tc, test_resumes_after_the_highest_indexed_row);
	tcase_add_test(tc, test_inline_mode_catches_up_at_start);
	tcase_add_test(tc, test_a_large_commit_carries_its_own_text);
	tcase_add_test(tc, test_a_small_commit_joins_only_for_a_search);
	tcase_add_test(tc, test_a_rolled_back_join_leaves_the_index_where_it_was);
	tcase_add_test(tc, test_a_waiting_thread_wakes_when_indexed);
	tcase_add_test(tc, test_stopping_releases_waiters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(search_index_suite());
}
