/*
 * test_sql.c - checks stored/sql.c on an in-memory database: sql_exec runs
 * several statements and reports a bad one as ERR_DB; sql_read_int reads
 * the first column of the first row and fails, leaving *out alone, on a bad
 * statement or an empty result.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdint.h>

#include "../../common/err.h"
#include "../../stored/sql.h"
#include "../support/suite.h"

static sqlite3 *db;

static void setup(void)
{
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
}

static void teardown(void)
{
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK); /* fails if a statement leaked */
}

START_TEST(exec_runs_every_statement)
{
	int64_t n = 0;

	ck_assert_int_eq(sql_exec(db, "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (4), (5);"), 0);
	ck_assert_int_eq(sql_read_int(db, "SELECT sum(x) FROM t", &n), 0);
	ck_assert_int_eq(n, 9);
	ck_assert_int_eq(sql_exec(db, "INSERT INTO missing VALUES (1)"), ERR_DB);
}
END_TEST

START_TEST(read_int_fails_without_a_row)
{
	int64_t n = 42;

	ck_assert_int_eq(sql_exec(db, "CREATE TABLE t(x INTEGER)"), 0);
	ck_assert_int_eq(sql_read_int(db, "SELECT x FROM t", &n), ERR_DB);
	ck_assert_int_eq(sql_read_int(db, "SELECT x FROM missing", &n), ERR_DB);
	ck_assert_int_eq(n, 42);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sql");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, exec_runs_every_statement);
	tcase_add_test(tc, read_int_fails_without_a_row);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
