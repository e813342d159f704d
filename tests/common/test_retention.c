/*
 * test_retention.c - checks common/retention.c: parsing (good and bad texts)
 * and the SQL conditions, run against an in-memory SQLite table of (kind,
 * created_at) rows and compared with the rule read by hand: an event goes
 * when older than the days of the FIRST rule naming its kind.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../common/retention.h"
#include "../support/suite.h"

START_TEST(test_parse_good)
{
	struct retention r;
	char err[160];

	ck_assert_int_eq(retention_parse("", &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.nrules, 0);
	ck_assert_int_eq(retention_parse(" 7, 6 : 30 ; * : 3650 ;", &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.nrules, 2);
	ck_assert_uint_eq(r.rule[0].nranges, 2);
	ck_assert_uint_eq(r.rule[0].lo[0], 7);
	ck_assert_uint_eq(r.rule[0].lo[1], 6);
	ck_assert_uint_eq(r.rule[0].days, 30);
	ck_assert_uint_eq(r.rule[1].nranges, 0);
	ck_assert_uint_eq(r.rule[1].days, 3650);
	ck_assert_int_eq(retention_parse("20000-29999:1", &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.rule[0].lo[0], 20000);
	ck_assert_uint_eq(r.rule[0].hi[0], 29999);
}
END_TEST

START_TEST(test_parse_bad)
{
	static const char *const bad[] = {
		"7", "7:", ":30", "x:30", "7:x", "7-:30", "9-7:30", "70000:1", "7:30 junk", "*,7:1",
		"1:1;2:2;3:3;4:4;5:5;6:6;7:7;8:8;9:9;10:10;11:11;12:12;13:13;14:14;15:15;16:16;17:17",
	};
	struct retention r;
	char err[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(retention_parse(bad[i], &r, err, sizeof(err)) == ERR_CONFIG, "%s", bad[i]);
}
END_TEST

/* The hand reading: the index of the first rule naming kind, or -1. */
static int deciding_rule(const struct retention *r, uint32_t kind)
{
	for (uint32_t i = 0; i < r->nrules; i++) {
		if (r->rule[i].nranges == 0)
			return (int)i;
		for (uint32_t j = 0; j < r->rule[i].nranges; j++)
			if (kind >= r->rule[i].lo[j] && kind <= r->rule[i].hi[j])
				return (int)i;
	}
	return -1;
}

START_TEST(test_where_matches_hand_reading)
{
	const int64_t now = 2000000000;
	struct retention r;
	char err[160];
	sqlite3 *db;

	ck_assert_int_eq(retention_parse("7,6:30; 1-5:365; 30000-39999:1", &r, err, sizeof(err)), 0);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE events(kind INTEGER, created_at INTEGER)", 0, 0, 0),
			 SQLITE_OK);
	srand(7);
	for (int i = 0; i < 2000; i++) {
		char sql[128];
		int kind = (int[]){ 1, 3, 6, 7, 9, 30023, 39999, 40000 }[rand() % 8];

		snprintf(sql, sizeof(sql), "INSERT INTO events VALUES(%d, %lld)", kind,
			 (long long)(now - (int64_t)(rand() % 400) * 86400 - rand() % 86400));
		ck_assert_int_eq(sqlite3_exec(db, sql, 0, 0, 0), SQLITE_OK);
	}
	for (uint32_t i = 0; i < r.nrules; i++) {
		struct buf where = BUF_INIT, count = BUF_INIT;
		sqlite3_stmt *st, *all;
		int64_t got = -1, want = 0;

		ck_assert_int_eq(retention_where(&r, i, now, &where), 0);
		buf_append_str(&count, "SELECT count(*) FROM events WHERE ");
		buf_append_str(&count, where.data);
		ck_assert_int_eq(sqlite3_prepare_v2(db, count.data, -1, &st, NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		got = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT kind, created_at FROM events", -1, &all, NULL),
				 SQLITE_OK);
		while (sqlite3_step(all) == SQLITE_ROW) {
			uint32_t kind = (uint32_t)sqlite3_column_int(all, 0);
			int64_t created = sqlite3_column_int64(all, 1);

			if (deciding_rule(&r, kind) == (int)i &&
			    created < now - (int64_t)r.rule[i].days * 86400)
				want++;
		}
		sqlite3_finalize(all);
		ck_assert_int_eq(got, want);
		buf_free(&where);
		buf_free(&count);
	}
	sqlite3_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("retention");
	TCase *tc = tcase_create("retention");

	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_where_matches_hand_reading);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
