/*
 * test_search_index.c - checks stored/search_index.c against real SQLite
 * files: an events database and the search.db next to it.
 *
 * Events are written straight into the events table on a writer's
 * connection (search_index_track_deletions: its trigger logs deletions;
 * search.db is attached read-only to read the index back) with a JSON text of their own choosing
 * (the index reads only seq and json), and reported to the watermark the way
 * the writer does (search_watermark_committed).  What the index holds is read
 * back through the attached file with FTS5 MATCH queries, so every
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
static char index_path[TMPDIR_FILE_MAX + 16];
static sqlite3 *db; /* the writer's connection */
static struct search_watermark wm;

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	search_index_path(index_path, sizeof(index_path), db_path);
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	ck_assert_int_eq(search_watermark_init(&wm), 0);
}

static void teardown(void)
{
	db_close(db);
	search_watermark_destroy(&wm);
	testdb_unlink(db_path);
	testdb_unlink(index_path);
}

/* What a restarted stored starts from: nothing in memory. */
static void forget_watermark(void)
{
	search_watermark_destroy(&wm);
	ck_assert_int_eq(search_watermark_init(&wm), 0);
}

/* The index, opened the way stored's writer opens it, or the test fails. */
static struct search_index *open_index(uint32_t batch, uint32_t delay_ms)
{
	struct search_index *x = search_index_open(db_path, index_path, &wm, batch, delay_ms);

	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(search_index_track_deletions(db, &wm), 0);
	ck_assert_int_eq(db_attach(db, index_path, "search"), 0);
	return x;
}

/* Closes the index and detaches it from the writer's connection. */
static void close_index(struct search_index *x)
{
	search_index_close(x);
	ck_assert_int_eq(sqlite3_exec(db, "DETACH DATABASE search", NULL, NULL, NULL), SQLITE_OK);
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
	search_watermark_committed(&wm, seq);
}

/* Deletes an event and reports the commit the way the writer does. */
static void delete_event(int64_t seq)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "DELETE FROM events WHERE seq = %lld", (long long)seq);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	search_watermark_committed(&wm, 0);
}

/* The seqs the index finds for an FTS5 query, ascending, as "1 3". */
static const char *found(const char *match)
{
	static char out[256];
	sqlite3_stmt *st;
	size_t len = 0;

	ck_assert_int_eq(sqlite3_prepare_v2(db,
					    "SELECT rowid FROM search.events_fts WHERE events_fts MATCH ?1"
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
	return testdb_int(db, "SELECT count(*) FROM search.events_fts");
}

START_TEST(test_commits_wait_for_the_delay_then_go_in_one_run)
{
	/* A delay a busy machine cannot outlast between the stores and the
	 * first run: 150 ms once could, and the run then indexed early. */
	struct search_index *x = open_index(100, 1000);

	store(1, "\"alpha one\"");
	store(2, "\"\"");
	store(3, "\"beta two alpha\"");
	/* Not yet: only 3 of 100 wait and 1000 ms have not passed. */
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_int_eq(text_rows(), 0);
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert_int_gt(search_index_due_in_ms(x), 0);
	usleep(600 * 1000);
	usleep(600 * 1000);
	ck_assert_int_eq(search_index_due_in_ms(x), 0);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("alpha"), "1 3");
	ck_assert_str_eq(found("beta"), "3");
	ck_assert_int_eq(text_rows(), 2); /* the empty content has no row */
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	close_index(x);
}
END_TEST

START_TEST(test_content_is_decoded)
{
	struct search_index *x = open_index(100, 0);

	store(1, "\"caf\\u00e9 \\\"quoted\\\" new\\nline\"");
	ck_assert_int_eq(search_index_due_in_ms(x), 0); /* delay 0: at once */
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("caf\xc3\xa9"), "1");
	ck_assert_str_eq(found("quoted"), "1");
	ck_assert_str_eq(found("line"), "1");
	ck_assert_str_eq(found("u00e9"), "");
	close_index(x);
}
END_TEST

START_TEST(test_batch_bounds_each_run)
{
	struct search_index *x = open_index(2, 60000);

	ck_assert_int_eq(search_index_run(x), 0);
	store(1, "\"word\"");
	ck_assert_int_gt(search_index_due_in_ms(x), 0);
	for (int64_t seq = 2; seq <= 5; seq++)
		store(seq, "\"word\"");
	ck_assert_int_eq(search_index_due_in_ms(x), 0); /* a full batch waits */
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("word"), "1 2");
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("word"), "1 2 3 4");
	/* One event left of a batch of two: it waits for its minute. */
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("word"), "1 2 3 4");
	ck_assert_int_eq(search_watermark_lag(&wm), 1);
	close_index(x);
}
END_TEST

START_TEST(test_a_search_makes_it_due_at_once)
{
	struct search_index *x = open_index(100, 60000);
	int64_t seq = 0;

	ck_assert_int_eq(search_index_run(x), 0);
	store(1, "\"needle\"");
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
	close_index(x);
}
END_TEST

START_TEST(test_deleted_before_its_turn_is_skipped)
{
	struct search_index *x = open_index(100, 0);

	store(1, "\"kept\"");
	store(2, "\"gone kept\"");
	delete_event(2);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("kept"), "1");
	ck_assert_str_eq(found("gone"), "");
	close_index(x);
}
END_TEST

/* The writer's trigger logs the deletion in relay.db; the next run takes
 * the text out of search.db, and the writer prunes the log after that. */
START_TEST(test_deleted_after_indexing_leaves_the_index)
{
	struct search_index *x = open_index(100, 0);
	int64_t pruned = 0;

	store(1, "\"secret words\"");
	store(2, "\"other words\"");
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("words"), "1 2");
	delete_event(1);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM search_gone WHERE seq = 1"), 1);
	/* Nothing was pruned yet: the index has not applied it. */
	ck_assert_int_eq(search_index_prune_gone(db, &wm, &pruned), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM search_gone"), 1);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("secret"), "");
	ck_assert_str_eq(found("words"), "2");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM search.events_fts_content"), 1);
	ck_assert_int_eq(search_index_prune_gone(db, &wm, &pruned), 0);
	ck_assert_int_eq(pruned, 1);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM search_gone"), 0);
	/* Ids are never reused: the next deletion is applied too. */
	delete_event(2);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_int_eq(text_rows(), 0);
	close_index(x);
}
END_TEST

/* An idle indexer has nothing due until the writer commits: new events or
 * a deletion its trigger logged (it used to read the log every second). */
START_TEST(test_idle_until_a_deletion_is_committed)
{
	struct search_index *x = open_index(100, 0);

	/* Just opened: the first run reads what was logged before. */
	ck_assert_int_eq(search_index_due_in_ms(x), 0);
	store(1, "\"words\"");
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	/* Logged but not yet reported as committed: still nothing due. */
	ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM events WHERE seq = 1", NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	search_watermark_committed(&wm, 0);
	ck_assert_int_eq(search_index_due_in_ms(x), 0);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_int_eq(text_rows(), 0);
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	/* A delete rolled back still wakes it once, and it finds nothing. */
	store(2, "\"kept\"");
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_int_eq(sqlite3_exec(db, "BEGIN; DELETE FROM events WHERE seq = 2; ROLLBACK",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	search_watermark_committed(&wm, 0);
	ck_assert_int_eq(search_index_due_in_ms(x), 0);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("kept"), "2");
	ck_assert_int_eq(search_index_due_in_ms(x), -1);
	close_index(x);
}
END_TEST

/* A restart (or crash) loses only memory: search.db records how far it
 * indexed in the same transaction as the text. */
START_TEST(test_resumes_where_it_stopped)
{
	struct search_index *x = open_index(100, 0);

	store(1, "\"old\"");
	store(2, "\"old\"");
	ck_assert_int_eq(search_index_run(x), 0);
	store(3, "\"new\"");
	store(4, "\"\"");
	store(5, "\"new\"");
	close_index(x); /* stopped before indexing 3-5 */
	forget_watermark();

	x = open_index(100, 0);
	ck_assert_int_eq(search_watermark_lag(&wm), 3);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("old"), "1 2");
	ck_assert_str_eq(found("new"), "3 5");
	ck_assert_int_eq(text_rows(), 4);
	close_index(x);
}
END_TEST

/* An index built for another relay.db (a new database beside an old
 * search.db) is rebuilt from the events it now sits next to. */
START_TEST(test_another_databases_index_is_rebuilt)
{
	struct search_index *x = open_index(100, 0);

	store(1, "\"stale\"");
	ck_assert_int_eq(search_index_run(x), 0);
	close_index(x);
	db_close(db);
	testdb_unlink(db_path);
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	forget_watermark();

	store(1, "\"fresh\"");
	x = open_index(100, 0);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("stale"), "");
	ck_assert_str_eq(found("fresh"), "1");
	close_index(x);
}
END_TEST

/* An index ahead of its database (an older copy of relay.db restored) is
 * rebuilt too: its text might be of events the copy never had. */
START_TEST(test_an_index_ahead_of_its_database_is_rebuilt)
{
	struct search_index *x = open_index(100, 0);

	store(1, "\"kept\"");
	store(2, "\"lost\"");
	ck_assert_int_eq(search_index_run(x), 0);
	close_index(x);
	/* Without the writer's trigger, as a restored copy would be. */
	db_close(db);
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	delete_event(2);
	forget_watermark();

	x = open_index(100, 0);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("lost"), "");
	ck_assert_str_eq(found("kept"), "1");
	close_index(x);
}
END_TEST

/* A damaged search.db (here: not a database at all) is built again. */
START_TEST(test_a_damaged_index_is_rebuilt)
{
	struct search_index *x;
	FILE *f;

	store(1, "\"survives\"");
	ck_assert_ptr_nonnull(f = fopen(index_path, "w"));
	for (int i = 0; i < 512; i++)
		fputs("this is not an SQLite file ", f);
	fclose(f);
	x = open_index(100, 0);
	ck_assert_int_eq(search_index_run(x), 0);
	ck_assert_str_eq(found("survives"), "1");
	close_index(x);
}
END_TEST

/* search = 0: the file goes (its text would outlive deletions nobody
 * applies), and so does the log of deletions. */
START_TEST(test_search_off_removes_the_index)
{
	struct search_index *x = open_index(100, 0);

	store(1, "\"word\"");
	ck_assert_int_eq(search_index_run(x), 0);
	delete_event(1);
	close_index(x);
	ck_assert_int_eq(access(index_path, F_OK), 0);
	ck_assert_int_eq(search_index_remove(db, index_path), 0);
	ck_assert_int_ne(access(index_path, F_OK), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM search_gone"), 0);
}
END_TEST

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

/* The indexer's own thread: a waiting search wakes it long before its
 * minute, and it indexes what the search waits for. */
START_TEST(test_the_thread_serves_a_waiting_search)
{
	struct search_index *x = open_index(100, 60000);
	struct waiter w = { 2, false };
	pthread_t t;

	store(1, "\"one\"");
	store(2, "\"two\"");
	ck_assert_int_eq(search_index_start(x, 0), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_index, &w), 0);
	pthread_join(t, NULL);
	ck_assert(w.covered);
	ck_assert_str_eq(found("two"), "2");
	close_index(x);
}
END_TEST

/* ... and with nobody waiting, it indexes once its delay has passed, and
 * applies a deletion when woken by its commit. */
START_TEST(test_the_thread_indexes_after_its_delay_and_forgets_deletions)
{
	struct search_index *x = open_index(100, 50);
	int tries = 0;

	ck_assert_int_eq(search_index_start(x, 0), 0);
	store(1, "\"later\"");
	while (search_watermark_lag(&wm) > 0 && ++tries < 3000) /* 30 s: a guard, not a measure */
		usleep(10 * 1000);
	ck_assert_int_eq(search_watermark_lag(&wm), 0);
	ck_assert_str_eq(found("later"), "1");
	delete_event(1);
	for (tries = 0; text_rows() > 0 && tries < 3000; tries++)
		usleep(10 * 1000);
	ck_assert_int_eq(text_rows(), 0);
	close_index(x);
}
END_TEST

/* When the index closes, a searcher does not wait out its time. */
START_TEST(test_closing_releases_waiters)
{
	struct search_index *x = open_index(100, 60000);
	struct waiter w = { 1, false };
	pthread_t t;

	ck_assert_int_eq(search_index_run(x), 0);
	store(1, "\"one\"");
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_index, &w), 0);
	while (search_index_due_in_ms(x) != 0) /* until the waiter has asked */
		usleep(1000);
	close_index(x);
	pthread_join(t, NULL);
	ck_assert(w.covered); /* nothing to wait for: the search runs on what is there */
}
END_TEST

static Suite *search_index_suite(void)
{
	Suite *s = suite_create("search_index");
	TCase *tc = tcase_create("search_index");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_commits_wait_for_the_delay_then_go_in_one_run);
	tcase_add_test(tc, test_content_is_decoded);
	tcase_add_test(tc, test_batch_bounds_each_run);
	tcase_add_test(tc, test_a_search_makes_it_due_at_once);
	tcase_add_test(tc, test_deleted_before_its_turn_is_skipped);
	tcase_add_test(tc, test_deleted_after_indexing_leaves_the_index);
	tcase_add_test(tc, test_idle_until_a_deletion_is_committed);
	tcase_add_test(tc, test_resumes_where_it_stopped);
	tcase_add_test(tc, test_another_databases_index_is_rebuilt);
	tcase_add_test(tc, test_an_index_ahead_of_its_database_is_rebuilt);
	tcase_add_test(tc, test_a_damaged_index_is_rebuilt);
	tcase_add_test(tc, test_search_off_removes_the_index);
	tcase_add_test(tc, test_the_thread_serves_a_waiting_search);
	tcase_add_test(tc, test_the_thread_indexes_after_its_delay_and_forgets_deletions);
	tcase_add_test(tc, test_closing_releases_waiters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(search_index_suite());
}
