/*
 * test_stmt_cache.c - checks stored/stmt_cache.c on an in-memory database:
 * a text taken again reuses its statement (nothing prepared), a released
 * statement is reset and unbound, the least recently used one is evicted
 * when the cache is full, a text taken twice at once gives two statements,
 * a take when every entry is out still works (the statement is then not
 * kept), and a bad text fails without keeping anything.  The query threads'
 * use of it is checked against a reference in test_query_sql.
 */
#include <check.h>
#include <sqlite3.h>
#include <string.h>

#include "../../common/err.h"
#include "../../stored/stmt_cache.h"
#include "../support/suite.h"

static sqlite3 *db;

static void setup(void)
{
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db,
				      "CREATE TABLE t(x INTEGER);"
				      "INSERT INTO t VALUES (1), (2), (3);",
				      NULL, NULL, NULL),
			 SQLITE_OK);
}

static void teardown(void)
{
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK); /* fails if a statement leaked */
}

static sqlite3_stmt *take(struct stmt_cache *c, const char *sql)
{
	sqlite3_stmt *st = NULL;

	ck_assert_int_eq(stmt_cache_take(c, sql, strlen(sql), &st), 0);
	ck_assert_ptr_nonnull(st);
	return st;
}

/* Takes the statement for sql and gives it back unused. */
static void use(struct stmt_cache *c, const char *sql)
{
	stmt_cache_release(c, take(c, sql));
}

/* The one value `SELECT ?1`-style statement st gives, bound or not. */
static int64_t first_value(sqlite3_stmt *st)
{
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	return sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
}

START_TEST(reuses_by_text)
{
	struct stmt_cache *c = stmt_cache_new(db, 4);
	sqlite3_stmt *a = take(c, "SELECT ?1 + 1"), *again;

	sqlite3_bind_int64(a, 1, 41);
	ck_assert_int_eq(first_value(a), 42);
	stmt_cache_release(c, a);
	again = take(c, "SELECT ?1 + 1");
	ck_assert_ptr_eq(again, a);
	ck_assert_uint_eq(stmt_cache_prepared(c), 1);
	sqlite3_bind_int64(again, 1, 1);
	ck_assert_int_eq(first_value(again), 2);
	stmt_cache_release(c, again);
	/* A different text is a different statement. */
	use(c, "SELECT ?1 + 2");
	ck_assert_uint_eq(stmt_cache_prepared(c), 2);
	stmt_cache_free(c);
}
END_TEST

START_TEST(released_is_reset_and_unbound)
{
	struct stmt_cache *c = stmt_cache_new(db, 4);
	sqlite3_stmt *st = take(c, "SELECT x FROM t WHERE x >= ?1 ORDER BY x");

	sqlite3_bind_int64(st, 1, 2);
	ck_assert_int_eq(first_value(st), 2); /* one row of two read, then given back */
	stmt_cache_release(c, st);
	ck_assert(!sqlite3_stmt_busy(st));
	st = take(c, "SELECT x FROM t WHERE x >= ?1 ORDER BY x");
	/* Unbound: NULL compares false, so no row (not the old binding's 2, 3). */
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	stmt_cache_release(c, st);
	st = take(c, "SELECT ?1");
	ck_assert_int_eq(first_value(st), -1);
	stmt_cache_release(c, st);
	stmt_cache_free(c);
}
END_TEST

START_TEST(evicts_least_recently_used)
{
	struct stmt_cache *c = stmt_cache_new(db, 2);

	use(c, "SELECT 1");
	use(c, "SELECT 2");
	use(c, "SELECT 1"); /* 2 is now the oldest */
	use(c, "SELECT 3"); /* evicts 2 */
	ck_assert_uint_eq(stmt_cache_prepared(c), 3);
	use(c, "SELECT 1");
	use(c, "SELECT 3");
	ck_assert_uint_eq(stmt_cache_prepared(c), 3);
	use(c, "SELECT 2"); /* prepared again */
	ck_assert_uint_eq(stmt_cache_prepared(c), 4);
	stmt_cache_free(c);
}
END_TEST

START_TEST(same_text_twice_at_once)
{
	struct stmt_cache *c = stmt_cache_new(db, 4);
	sqlite3_stmt *outer = take(c, "SELECT x FROM t ORDER BY x");
	sqlite3_stmt *inner;

	ck_assert_int_eq(first_value(outer), 1);
	inner = take(c, "SELECT x FROM t ORDER BY x");
	ck_assert_ptr_ne(inner, outer);
	ck_assert_int_eq(first_value(inner), 1);
	ck_assert_int_eq(first_value(outer), 2); /* the outer one kept its place */
	stmt_cache_release(c, inner);
	stmt_cache_release(c, outer);
	ck_assert_uint_eq(stmt_cache_prepared(c), 2);
	stmt_cache_free(c);
}
END_TEST

START_TEST(all_entries_out)
{
	struct stmt_cache *c = stmt_cache_new(db, 1);
	sqlite3_stmt *kept = take(c, "SELECT 1");
	sqlite3_stmt *extra = take(c, "SELECT 2");

	ck_assert_int_eq(first_value(extra), 2);
	stmt_cache_release(c, extra); /* finalized: not kept */
	stmt_cache_release(c, kept);
	use(c, "SELECT 1");
	ck_assert_uint_eq(stmt_cache_prepared(c), 2);
	use(c, "SELECT 2");
	ck_assert_uint_eq(stmt_cache_prepared(c), 3);
	stmt_cache_free(c);
}
END_TEST

START_TEST(bad_text_fails)
{
	struct stmt_cache *c = stmt_cache_new(db, 2);
	const char *bad = "SELECT FROM nowhere";
	sqlite3_stmt *st = NULL;

	ck_assert_int_eq(stmt_cache_take(c, bad, strlen(bad), &st), ERR_DB);
	ck_assert_uint_eq(stmt_cache_prepared(c), 0);
	use(c, "SELECT 1");
	use(c, "SELECT 1");
	ck_assert_uint_eq(stmt_cache_prepared(c), 1);
	stmt_cache_release(c, NULL);
	stmt_cache_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stmt_cache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reuses_by_text);
	tcase_add_test(tc, released_is_reset_and_unbound);
	tcase_add_test(tc, evicts_least_recently_used);
	tcase_add_test(tc, same_text_twice_at_once);
	tcase_add_test(tc, all_entries_out);
	tcase_add_test(tc, bad_text_fails);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
