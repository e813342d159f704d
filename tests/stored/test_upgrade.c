/*
 * test_upgrade.c - checks stored/upgrade.c through db_open() on real files
 * in a private directory.  Older databases are made from a new one: its
 * tags table and trigger are swapped back for the version-2 ones (rowid
 * table, (name, value, created_at) and seq indexes, delete by seq), then
 * older versions' rows are written with the test's own SQL.  A version-0
 * database comes out current with exactly its lowercase 64-digit values
 * packed, in every rowid range of the conversion; a version-1 one loses its
 * full-text index; a version-2 one filled through ingest_event() answers
 * every query shape (REQ, COUNT, export, delete) the same after the
 * conversion, and deleting events then leaves no tag rows behind; a copy
 * cut short by a crash is finished; a new database starts current; a newer
 * version is refused and left untouched.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "../../common/filter.h"
#include "../../common/json.h"
#include "../../common/log.h"
#include "../../stored/db.h"
#include "../../stored/query_sql.h"
#include "../../stored/upgrade.h"
#include "../../stored/ingest.h"
#include "../support/splitmix.h"
#include "../support/suite.h"
#include "../support/tagsjson.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("test_upgrade")

static char db_path[TMPDIR_FILE_MAX];

#define HEX "00ff10ab23cd45ef6789abcdef0123456789abcdef0123456789abcdef012345"
#define HEX_UPPER "00FF10AB23CD45EF6789ABCDEF0123456789ABCDEF0123456789ABCDEF012345"
#define PACKED "x'0000ff10ab23cd45ef6789abcdef0123456789abcdef0123456789abcdef012345'"

static void setup(void)
{
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	log_set_level(LOG_ERROR);
}

static void teardown(void)
{
	testdb_unlink(db_path);
}

static sqlite3 *open_writer(void)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	return db;
}

/* The version-2 tags table and trigger, as the base schema made them. */
static void make_version_2(sqlite3 *db)
{
	testdb_exec(db, "DROP TRIGGER events_cleanup;"
			"DROP TABLE tags;"
			"CREATE TABLE tags(seq INTEGER NOT NULL, name TEXT NOT NULL,"
			" value BLOB NOT NULL, created_at INTEGER NOT NULL);"
			"CREATE INDEX tags_value ON tags(name, value, created_at);"
			"CREATE INDEX tags_seq ON tags(seq);"
			"CREATE TRIGGER events_cleanup AFTER DELETE ON events BEGIN"
			" DELETE FROM tags WHERE seq = old.seq;"
			" END;"
			"PRAGMA user_version=2");
}

/* Rows of a version-0 database: one event, tags at rowids on both sides of
 * every conversion range's edge, as text blobs. */
static void write_version_0(void)
{
	sqlite3 *db = open_writer();
	char sql[512];
	const long long rowids[] = { 1, UPGRADE_CHUNK_ROWS - 1, UPGRADE_CHUNK_ROWS,
				     UPGRADE_CHUNK_ROWS + 1, 3LL * UPGRADE_CHUNK_ROWS + 7 };

	make_version_2(db);
	testdb_exec(db, "PRAGMA user_version=0");
	testdb_exec(db, "INSERT INTO events(seq, id, pubkey, created_at, kind, json)"
			" VALUES(1, zeroblob(32), zeroblob(32), 5, 1, '{}')");
	for (size_t i = 0; i < sizeof(rowids) / sizeof(rowids[0]); i++) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO tags(rowid, seq, name, value, created_at)"
			 " VALUES(%lld, 1, 'p', CAST('" HEX "' AS BLOB), 5)",
			 rowids[i]);
		testdb_exec(db, sql);
	}
	testdb_exec(db, "INSERT INTO tags(rowid, seq, name, value, created_at) VALUES"
			" (10, 1, 'q', CAST('" HEX_UPPER "' AS BLOB), 5),"
			" (11, 1, 't', CAST('nostr' AS BLOB), 5),"
			" (12, 1, 'x', CAST('" HEX "0' AS BLOB), 5)");
	db_close(db);
}

/* Events a `#p` (or other) filter in JSON finds through query_sql. */
static int found_by(sqlite3 *db, const char *json)
{
	cJSON *obj = cJSON_Parse(json);
	struct filter f;
	char why[128];
	sqlite3_stmt *st;
	int n = 0;

	ck_assert_ptr_nonnull(obj);
	ck_assert_int_eq(filter_parse(obj, NULL, &f, why, sizeof(why)), 0);
	ck_assert_int_eq(query_sql_prepare(db, &f, INT64_MAX, 100, &st), 0);
	while (sqlite3_step(st) == SQLITE_ROW)
		n++;
	sqlite3_finalize(st);
	filter_free(&f);
	cJSON_Delete(obj);
	return n;
}

START_TEST(packs_a_version_0_database)
{
	sqlite3 *db;

	write_version_0();
	db = open_writer();
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	/* The five p rows, packed in every range, are one key from version 3
	 * on; a range left unpacked would show as a second row. */
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE value = " PACKED), 1);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 4);
	ck_assert_int_eq(
	    testdb_int(db, "SELECT count(*) FROM tags WHERE name = 'q' AND value = CAST('" HEX_UPPER
			   "' AS BLOB)"),
	    1);
	ck_assert_int_eq(
	    testdb_int(db, "SELECT count(*) FROM tags WHERE name = 't' AND value = x'6e6f737472'"), 1);
	ck_assert_int_eq(testdb_int(db, "SELECT length(value) FROM tags WHERE name = 'x'"), 65);
	ck_assert_int_eq(found_by(db, "{\"#p\":[\"" HEX "\"]}"), 1);
	ck_assert_int_eq(found_by(db, "{\"#q\":[\"" HEX_UPPER "\"]}"), 1);
	ck_assert_int_eq(found_by(db, "{\"#q\":[\"" HEX "\"]}"), 0);
	db_close(db);
}
END_TEST

/* Version 1 kept the full-text index in relay.db, with a trigger that
 * deleted from it; version 2 drops both (search.db is rebuilt from the
 * events), and deleting an event still takes its tags. */
START_TEST(moves_the_search_index_out_of_a_version_1_database)
{
	sqlite3 *db = open_writer();

	make_version_2(db);
	testdb_exec(db, "CREATE VIRTUAL TABLE events_fts USING fts5(content, tokenize='unicode61');"
			"DROP TRIGGER events_cleanup;"
			"CREATE TRIGGER events_cleanup AFTER DELETE ON events BEGIN"
			" DELETE FROM tags WHERE seq = old.seq;"
			" DELETE FROM events_fts WHERE rowid = old.seq;"
			" END;"
			"INSERT INTO events(seq, id, pubkey, created_at, kind, json)"
			" VALUES(1, zeroblob(32), zeroblob(32), 5, 1, '{\"tags\":[[\"t\",\"\\u0001\"]]}');"
			"INSERT INTO events_fts(rowid, content) VALUES(1, 'old text');"
			"INSERT INTO tags(seq, name, value, created_at) VALUES(1, 't', x'01', 5);"
			"PRAGMA user_version=1");
	db_close(db);
	db = open_writer();
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM sqlite_master"
				       " WHERE name LIKE 'events_fts%'"),
			 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
				       " AND sql LIKE '%events_fts%'"),
			 0);
	testdb_exec(db, "DELETE FROM events WHERE seq = 1");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 0);
	db_close(db);
}
END_TEST

/* ---- a version-2 database filled through ingest_event() ---- */

static struct splitmix rng;

/* Tag values: words, a U+0000, and 64 lowercase hex digits (kept packed). */
static const char *const tag_values[] = { "x", "nostr", "", "a" JSON_NUL "b", HEX, HEX_UPPER };
static const uint32_t kinds[] = { 1, 1, 7, 0, 3, 30000 };

/* Ingests event number n: random author, kind, created_at and tags, its
 * JSON naming the tags as a parsed event's does.  Replaceable kinds replace
 * (and so delete) earlier versions. */
static void ingest_random(struct ingest *in, uint32_t n)
{
	struct event_tag tags[4];
	uint8_t id[32] = { 0 }, pk[32] = { 0 }, sig[64] = { 0 };
	uint32_t ntags = (uint32_t)splitmix_below(&rng, 5);
	char json[1024];
	size_t len;
	struct event ev;
	const char *why;
	int64_t seq;

	id[0] = (uint8_t)(n >> 8);
	id[1] = (uint8_t)n;
	id[2] = 0x77;
	pk[0] = (uint8_t)(1 + splitmix_below(&rng, 4));
	for (uint32_t i = 0; i < ntags; i++) {
		const char *v = tag_values[splitmix_below(&rng, 6)];

		tags[i] = (struct event_tag){ "eptd"[splitmix_below(&rng, 4)], (uint32_t)strlen(v), v };
	}
	len = (size_t)snprintf(json, sizeof(json), "{\"n\":%u,", n);
	tagsjson_append(json, sizeof(json) - 1, &len, tags, ntags);
	json[len++] = '}';
	json[len] = '\0';
	ck_assert_int_eq(event_build(&ev, id, pk, sig, 1000 + (int64_t)splitmix_below(&rng, 50),
				     kinds[splitmix_below(&rng, 6)], tags, ntags, json,
				     (uint32_t)len),
			 0);
	ck_assert_int_ne(ingest_event(in, &ev, &seq, &why), INGEST_FAILED);
	event_free(&ev);
}

static void ingest_some(sqlite3 *db, uint32_t from, uint32_t to)
{
	struct ingest *in = ingest_new(db);

	ck_assert_ptr_nonnull(in);
	testdb_exec(db, "BEGIN");
	for (uint32_t n = from; n < to; n++)
		ingest_random(in, n);
	testdb_exec(db, "COMMIT");
	ingest_free(in);
}

/* Every query shape stored issues, one filter (or two) each. */
static const char *const shapes[] = {
	"{}",
	"{\"limit\":7}",
	"{\"#t\":[\"x\"]}",
	"{\"#t\":[\"x\",\"nostr\"],\"limit\":5}",
	"{\"#e\":[\"" HEX "\"]}",
	"{\"#p\":[\"" HEX "\"],\"kinds\":[1,7]}",
	"{\"#d\":[\"a\\u0000b\"]}",
	"{\"#d\":[\"\"]}",
	"{\"#t\":[\"" HEX_UPPER "\"],\"#d\":[\"x\"]}",
	"{\"authors\":[\"0200000000000000000000000000000000000000000000000000000000000000\"]}",
	"{\"kinds\":[0,3],\"since\":1010,\"until\":1040}",
	"{\"ids\":[\"0001770000000000000000000000000000000000000000000000000000000000\"]}",
	"{\"#t\":[\"nostr\"],\"since\":1020,\"limit\":3}",
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* What each shape answers on db, appended to out as text: the REQ's seqs
 * in order, the COUNT, and the export's seqs. */
static void answers(sqlite3 *db, char *out, size_t size)
{
	struct query_scope scope = { 0, INT64_MAX, 2000000000, 1000, false, false,
				     NULL, 0, NULL, 0 };
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < NSHAPES; i++) {
		cJSON *obj = json_parse(shapes[i], strlen(shapes[i]), false);
		struct filter f;
		char why[128];
		sqlite3_stmt *st;

		ck_assert_ptr_nonnull(obj);
		ck_assert_msg(filter_parse(obj, NULL, &f, why, sizeof(why)) == 0, "%s: %s", shapes[i],
			      why);
		scope.limit = f.limit ? f.limit : 1000;
		ck_assert_int_eq(query_sql_prepare_scoped(db, &f, &scope, &st), 0);
		while (sqlite3_step(st) == SQLITE_ROW)
			len += (size_t)snprintf(out + len, size - len, "%lld,",
						(long long)sqlite3_column_int64(st, 0));
		sqlite3_finalize(st);
		ck_assert_int_eq(query_sql_prepare_count(db, &f, 1, &scope, &st), 0);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		len += (size_t)snprintf(out + len, size - len, " count %lld; export ",
					(long long)sqlite3_column_int64(st, 0));
		sqlite3_finalize(st);
		ck_assert_int_eq(query_sql_prepare_export(db, &f, 1, &scope, &st), 0);
		while (sqlite3_step(st) == SQLITE_ROW)
			len += (size_t)snprintf(out + len, size - len, "%lld,",
						(long long)sqlite3_column_int64(st, 0));
		sqlite3_finalize(st);
		len += (size_t)snprintf(out + len, size - len, "\n");
		ck_assert_uint_lt(len, size - 1);
		filter_free(&f);
		cJSON_Delete(obj);
	}
}

static int64_t orphan_tags(sqlite3 *db)
{
	return testdb_int(db, "SELECT count(*) FROM tags WHERE seq NOT IN (SELECT seq FROM events)");
}

/* A version-2 database of 600 events (and tag rows across the first copy
 * range's edge) answers the same after the conversion; then deleting
 * through the new trigger (replacements, a filter's delete) leaves no tag
 * row of a deleted event.  cut: a crash stopped an earlier copy after
 * part of the first range (tags_v3 exists, partly filled). */
static void converts_version_2(bool cut)
{
	static char before[1 << 16], after[1 << 16];
	sqlite3 *db = open_writer();
	int64_t rows;

	rng.state = 37;
	make_version_2(db);
	ingest_some(db, 0, 600);
	answers(db, before, sizeof(before));
	rows = testdb_int(db, "SELECT count(*) FROM (SELECT DISTINCT name, value, created_at, seq"
			      " FROM tags)");
	ck_assert_int_gt(rows, 300);
	if (cut)
		testdb_exec(db, "CREATE TABLE tags_v3(name TEXT NOT NULL, value BLOB NOT NULL,"
				" created_at INTEGER NOT NULL, seq INTEGER NOT NULL,"
				" PRIMARY KEY(name, value, created_at, seq)) WITHOUT ROWID;"
				"INSERT OR IGNORE INTO tags_v3 SELECT name, value, created_at, seq FROM tags"
				" WHERE rowid < 100");
	db_close(db);

	db = open_writer();
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN"
				       " ('tags_v3', 'tags_value', 'tags_seq')"),
			 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), rows);
	answers(db, after, sizeof(after));
	ck_assert_str_eq(after, before);
	ingest_some(db, 600, 900);
	ck_assert_int_eq(orphan_tags(db), 0);
	testdb_exec(db, "DELETE FROM events WHERE seq % 3 = 0");
	ck_assert_int_eq(orphan_tags(db), 0);
	testdb_exec(db, "DELETE FROM events");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 0);
	db_close(db);
}

START_TEST(converts_a_version_2_database)
{
	converts_version_2(false);
}
END_TEST

START_TEST(finishes_a_conversion_cut_short)
{
	converts_version_2(true);
}
END_TEST

START_TEST(new_database_is_current)
{
	sqlite3 *db = open_writer();

	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION);
	db_close(db);
}
END_TEST

START_TEST(newer_version_refused)
{
	sqlite3 *db = open_writer();
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", UPGRADE_SCHEMA_VERSION + 1);
	testdb_exec(db, sql);
	db_close(db);
	db = NULL;
	ck_assert_int_ne(db_open(db_path, true, "normal", &db), 0);
	ck_assert_ptr_null(db);
	ck_assert_int_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	ck_assert_int_eq(testdb_int(db, "PRAGMA user_version"), UPGRADE_SCHEMA_VERSION + 1);
	sqlite3_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("upgrade");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, packs_a_version_0_database);
	tcase_add_test(tc, moves_the_search_index_out_of_a_version_1_database);
	tcase_add_test(tc, converts_a_version_2_database);
	tcase_add_test(tc, finishes_a_conversion_cut_short);
	tcase_add_test(tc, new_database_is_current);
	tcase_add_test(tc, newer_version_refused);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
