/*
 * test_tagval.c - checks stored/tagval.c: which values are packed (64
 * lowercase hex digits, nothing else), the packed bytes (a zero marker and
 * the 32 decoded bytes, written out here by hand), that other values come
 * back as the same pointer, and that tagval_bind() and the SQL function
 * tagval_key() give SQLite the same bytes, on an in-memory database.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>

#include "../../stored/tagval.h"
#include "../support/suite.h"

static const char hex[] = "00ff10ab23cd45ef6789abcdef0123456789abcdef0123456789abcdef012345";
static const unsigned char packed[TAGVAL_PACKED_LEN] = {
	0x00, 0x00, 0xff, 0x10, 0xab, 0x23, 0xcd, 0x45, 0xef, 0x67, 0x89, 0xab,
	0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23,
	0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45
};

START_TEST(packs_lowercase_hex)
{
	uint8_t buf[TAGVAL_PACKED_LEN];
	int n = -1;
	const void *key = tagval_key(hex, strlen(hex), buf, &n);

	ck_assert_ptr_eq(key, buf);
	ck_assert_int_eq(n, TAGVAL_PACKED_LEN);
	ck_assert_mem_eq(buf, packed, TAGVAL_PACKED_LEN);
}
END_TEST

/* Uppercase, one digit too few or too many, a non-digit, "": kept as is. */
START_TEST(keeps_everything_else)
{
	char upper[65], bad[65], longer[66];
	const char *const values[] = { upper, hex, bad, longer, "", "e" };
	const size_t lens[] = { 64, 63, 64, 65, 0, 1 };
	uint8_t buf[TAGVAL_PACKED_LEN];

	memcpy(upper, hex, 65);
	upper[5] = 'F';
	memcpy(bad, hex, 65);
	bad[63] = 'g';
	memcpy(longer, hex, 64);
	memcpy(longer + 64, "0", 2);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		int n = -1;

		ck_assert_ptr_eq(tagval_key(values[i], lens[i], buf, &n), values[i]);
		ck_assert_int_eq(n, (int)lens[i]);
	}
}
END_TEST

/* The blob SQLite returns for sql with value bound to ?1: in its kept form
 * by tagval_bind(), or as plain bytes (to give the SQL function text). */
static int bound_bytes(sqlite3 *db, const char *sql, const char *value, size_t len, bool kept,
		       unsigned char *out)
{
	sqlite3_stmt *st;
	int n;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (kept)
		ck_assert_int_eq(tagval_bind(st, 1, value, len), 0);
	else
		ck_assert_int_eq(sqlite3_bind_blob(st, 1, value, (int)len, SQLITE_STATIC), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_type(st, 0), SQLITE_BLOB);
	n = sqlite3_column_bytes(st, 0);
	if (n)
		memcpy(out, sqlite3_column_blob(st, 0), (size_t)n);
	sqlite3_finalize(st);
	return n;
}

START_TEST(bind_and_sql_function_agree)
{
	sqlite3 *db;
	unsigned char out[80];
	const char *const texts[] = { hex, "p-value", "" };

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(tagval_register(db), 0);
	ck_assert_int_eq(bound_bytes(db, "SELECT ?1", hex, 64, true, out), TAGVAL_PACKED_LEN);
	ck_assert_mem_eq(out, packed, TAGVAL_PACKED_LEN);
	/* The SQL function, given stored text, returns what tagval_key does. */
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t len = strlen(texts[i]);
		uint8_t buf[TAGVAL_PACKED_LEN];
		int want_n;
		const void *want = tagval_key(texts[i], len, buf, &want_n);

		ck_assert_int_eq(bound_bytes(db, "SELECT tagval_key(?1)", texts[i], len, false, out),
				 want_n);
		if (want_n)
			ck_assert_mem_eq(out, want, (size_t)want_n);
	}
	ck_assert_int_eq(bound_bytes(db, "SELECT tagval_key(?1)", hex, 64, true, out),
			 TAGVAL_PACKED_LEN); /* a packed value stays as it is */
	ck_assert_mem_eq(out, packed, TAGVAL_PACKED_LEN);
	sqlite3_close(db);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tagval");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, packs_lowercase_hex);
	tcase_add_test(tc, keeps_everything_else);
	tcase_add_test(tc, bind_and_sql_function_agree);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
