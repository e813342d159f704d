/*
 * test_ingest.c - checks stored/ingest.c against a real SQLite database.
 *
 * Each test opens a fresh database with db_open() in a private mkdtemp()
 * directory under /tmp, begins a transaction, applies hand-built events
 * (event_build) with ingest_event(), commits, and then reads the events and
 * tags tables back with its own SELECTs.  The expected contents are written
 * out by hand from the NIP-01 rules: regular events are kept unless the id
 * is known; replaceable (0, 3, 10000-19999) and addressable (30000-39999,
 * keyed by the first d value, missing d = "") keep only the newest version,
 * ties going to the lowest id.  Tags rows follow their event in and out
 * (full-text rows are test_search_index.c's).
 *
 * Events are labelled by the first byte of their id (the other bytes are a
 * fixed filler), so a table's contents can be written as "10 20".  One test
 * builds its events from client JSON with event_parse() instead (real
 * SHA-256 ids), to pin down how a ["d"] tag without a value arrives.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/hex.h"
#include "../../common/log.h"
#include "../../stored/db.h"
#include "../../stored/ingest.h"
#include "../support/ingestdb.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

/* ingest_event()'s refusal message; these tests only read it when refused. */
static const char *why;

/* The directory every test's database lives in: made once by the parent
 * process (unchecked fixture) and removed with whatever is left in it, so a
 * failing test, whose forked child exits before its teardown, leaves no
 * litter in /tmp. */
TMPDIR_SUITE("test_ingest")

static char db_path[TMPDIR_FILE_MAX];
static sqlite3 *db;
static struct ingest *in;

static void setup(void)
{
	ingestdb_open(tmp_dir, db_path, &db, &in);
}

static void teardown(void)
{
	ingestdb_close(db_path, db, in);
}

static void commit(void)
{
	testdb_exec(db, "COMMIT");
}

/* An event labelled label (id[0]) by author pk (pubkey[0]). */
static void make_event(struct event *ev, uint8_t label, uint8_t pk, int64_t created_at,
		       uint32_t kind, const struct event_tag *tags, uint32_t ntags)
{
	uint8_t id[EVENT_ID_LEN], pubkey[EVENT_PUBKEY_LEN], sig[EVENT_SIG_LEN];
	char json[64];
	int n;

	memset(id, 0x5a, sizeof(id));
	id[0] = label;
	memset(pubkey, 0x11, sizeof(pubkey));
	pubkey[0] = pk;
	memset(sig, 0x22, sizeof(sig));
	n = snprintf(json, sizeof(json), "{\"label\":%u,\"kind\":%u}", label, kind);
	ck_assert_int_eq(
	    event_build(ev, id, pubkey, sig, created_at, kind, tags, ntags, json, (uint32_t)n), 0);
}

/* Builds, ingests and frees one event; returns the outcome (and *seq). */
static enum ingest_outcome put(uint8_t label, uint8_t pk, int64_t created_at, uint32_t kind,
			       const struct event_tag *tags, uint32_t ntags, int64_t *seq)
{
	struct event ev;
	int64_t ignored = -1;
	enum ingest_outcome out;

	make_event(&ev, label, pk, created_at, kind, tags, ntags);
	out = ingest_event(in, &ev, seq ? seq : &ignored, &why);
	event_free(&ev);
	return out;
}

/* The labels of the events rows satisfying where, ascending, as "a b c". */
static const char *labels(const char *where)
{
	static char out[512];
	char sql[256];
	sqlite3_stmt *st;
	size_t len = 0;

	snprintf(sql, sizeof(sql), "SELECT id FROM events WHERE %s ORDER BY id", where);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		const uint8_t *id = sqlite3_column_blob(st, 0);

		ck_assert_int_eq(sqlite3_column_bytes(st, 0), EVENT_ID_LEN);
		len +=
		    (size_t)snprintf(out + len, sizeof(out) - len, "%s%u", len ? " " : "", id[0]);
	}
	sqlite3_finalize(st);
	return out;
}

#define TAG(letter, str)                                                                           \
	{                                                                                          \
		letter, (uint32_t)(sizeof(str) - 1), str                                           \
	}

START_TEST(test_regular_insert_then_duplicate)
{
	int64_t seq1 = 0, seq2 = 0, seq3 = -7;

	ck_assert_int_eq(put(10, 1, 100, 1, NULL, 0, &seq1), INGEST_STORED);
	ck_assert_int_eq(put(20, 1, 100, 1, NULL, 0, &seq2), INGEST_STORED);
	ck_assert_int_gt(seq1, 0);
	ck_assert_int_gt(seq2, seq1);
	/* The same id again, even with other fields, is a duplicate. */
	ck_assert_int_eq(put(10, 1, 100, 1, NULL, 0, &seq3), INGEST_DUPLICATE);
	ck_assert_int_eq(put(10, 2, 999, 7, NULL, 0, &seq3), INGEST_DUPLICATE);
	ck_assert_int_eq(seq3, -7);
	commit();
	ck_assert_str_eq(labels("1"), "10 20");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE addr IS NULL"), 2);
	ck_assert_int_eq(testdb_int(db, "SELECT seq FROM events WHERE json = '{\"label\":20,\"kind\":1}'"),
			 seq2);
}
END_TEST

START_TEST(test_regular_kinds_never_replace)
{
	/* Kinds just outside the replaceable/addressable ranges are regular. */
	static const uint32_t kinds[] = { 1, 2, 4, 9999, 40000, 65535 };
	char where[64];

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		ck_assert_int_eq(put((uint8_t)(10 + 2 * i), 1, 100, kinds[i], NULL, 0, NULL),
				 INGEST_STORED);
		ck_assert_int_eq(put((uint8_t)(11 + 2 * i), 1, 50, kinds[i], NULL, 0, NULL),
				 INGEST_STORED);
	}
	commit();
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(where, sizeof(where), "kind = %u", kinds[i]);
		ck_assert_int_eq(strlen(labels(where)) > 0, 1);
	}
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 12);
}
END_TEST

/* The replaceable kinds, one per loop iteration. */
static const uint32_t replaceable_kinds[] = { 0, 3, 10000, 19999 };

START_TEST(test_replaceable_keeps_newest)
{
	uint32_t kind = replaceable_kinds[_i];
	int64_t seq1 = 0, seq2 = 0, seq = -1;

	ck_assert_int_eq(put(10, 1, 100, kind, NULL, 0, &seq1), INGEST_STORED);
	ck_assert_int_eq(put(20, 1, 200, kind, NULL, 0, &seq2), INGEST_STORED);
	ck_assert_int_gt(seq2, seq1);
	/* Older than what is stored: refused, not stored. */
	ck_assert_int_eq(put(30, 1, 150, kind, NULL, 0, &seq), INGEST_SUPERSEDED);
	ck_assert_int_eq(seq, -1);
	/* The version replaced earlier, sent again: still older. */
	ck_assert_int_eq(put(10, 1, 100, kind, NULL, 0, NULL), INGEST_SUPERSEDED);
	/* The stored version again: duplicate. */
	ck_assert_int_eq(put(20, 1, 200, kind, NULL, 0, NULL), INGEST_DUPLICATE);
	/* Another author and another kind are other addresses. */
	ck_assert_int_eq(put(40, 2, 50, kind, NULL, 0, NULL), INGEST_STORED);
	ck_assert_int_eq(put(50, 1, 50, kind == 3 ? 0 : 3, NULL, 0, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("1"), "20 40 50");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE addr = ''"), 3);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE hex(pubkey) LIKE '01%'"), 2);
}
END_TEST

/* NIP-40: a stored version that has expired is gone for readers, so it
 * wins over nothing: an older version arriving now is stored, and the
 * expired one removed.  One that has not expired yet still wins. */
START_TEST(test_expired_version_supersedes_nothing)
{
	struct event ev;
	int64_t now = (int64_t)time(NULL);

	make_event(&ev, 20, 1, 200, 0, NULL, 0);
	ev.expiration = now - 5;
	ck_assert_int_eq(ingest_event(in, &ev, &(int64_t){ 0 }, &why), INGEST_STORED);
	event_free(&ev);
	make_event(&ev, 21, 2, 200, 0, NULL, 0);
	ev.expiration = now + 3600;
	ck_assert_int_eq(ingest_event(in, &ev, &(int64_t){ 0 }, &why), INGEST_STORED);
	event_free(&ev);
	ck_assert_int_eq(put(10, 1, 100, 0, NULL, 0, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 2, 100, 0, NULL, 0, NULL), INGEST_SUPERSEDED);
	commit();
	ck_assert_str_eq(labels("1"), "10 21");
}
END_TEST

START_TEST(test_replaceable_newest_later_wins_seq)
{
	int64_t seq_old = 0, seq_new = 0;
	char sql[128];

	ck_assert_int_eq(put(10, 1, 100, 0, NULL, 0, &seq_old), INGEST_STORED);
	commit();
	testdb_exec(db, "BEGIN");
	ck_assert_int_eq(put(20, 1, 101, 0, NULL, 0, &seq_new), INGEST_STORED);
	commit();
	ck_assert_int_gt(seq_new, seq_old);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE seq = %lld",
		 (long long)seq_old);
	ck_assert_int_eq(testdb_int(db, sql), 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE seq = %lld",
		 (long long)seq_new);
	ck_assert_int_eq(testdb_int(db, sql), 1);
}
END_TEST

/* Equal created_at: the lowest id wins whichever arrives first. */
START_TEST(test_tie_lowest_id_low_first)
{
	ck_assert_int_eq(put(0x10, 1, 500, 10002, NULL, 0, NULL), INGEST_STORED);
	ck_assert_int_eq(put(0x20, 1, 500, 10002, NULL, 0, NULL), INGEST_SUPERSEDED);
	commit();
	ck_assert_str_eq(labels("kind = 10002"), "16");
}
END_TEST

START_TEST(test_tie_lowest_id_high_first)
{
	ck_assert_int_eq(put(0x20, 1, 500, 10002, NULL, 0, NULL), INGEST_STORED);
	ck_assert_int_eq(put(0x10, 1, 500, 10002, NULL, 0, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("kind = 10002"), "16");
}
END_TEST

/* Ids that differ only in their last byte still order by memcmp. */
START_TEST(test_tie_last_byte)
{
	struct event a, b;
	int64_t seq;

	make_event(&a, 0x30, 1, 500, 0, NULL, 0);
	make_event(&b, 0x30, 1, 500, 0, NULL, 0);
	a.id[31] = 0x01;
	b.id[31] = 0xff;
	ck_assert_int_eq(ingest_event(in, &b, &seq, &why), INGEST_STORED);
	ck_assert_int_eq(ingest_event(in, &a, &seq, &why), INGEST_STORED);
	ck_assert_int_eq(ingest_event(in, &b, &seq, &why), INGEST_SUPERSEDED);
	commit();
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 1);
	ck_assert_int_eq(testdb_int(db, "SELECT substr(hex(id), 63, 2) = '01' FROM events"), 1);
	event_free(&a);
	event_free(&b);
}
END_TEST

START_TEST(test_addressable_by_d)
{
	static const struct event_tag d_a[] = { TAG('d', "a") };
	static const struct event_tag d_b[] = { TAG('d', "b") };
	int64_t seq = 0;

	ck_assert_int_eq(put(10, 1, 100, 30000, d_a, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 100, 30000, d_b, 1, NULL), INGEST_STORED);
	/* Replacing "a" leaves "b" alone. */
	ck_assert_int_eq(put(12, 1, 200, 30000, d_a, 1, &seq), INGEST_STORED);
	ck_assert_int_eq(put(13, 1, 150, 30000, d_a, 1, NULL), INGEST_SUPERSEDED);
	ck_assert_int_eq(put(14, 1, 50, 30000, d_b, 1, NULL), INGEST_SUPERSEDED);
	/* Same d under another kind or author: another address. */
	ck_assert_int_eq(put(15, 1, 10, 39999, d_a, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(16, 2, 10, 30000, d_a, 1, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("1"), "11 12 15 16");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE addr = 'a'"), 3);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE addr = 'b'"), 1);
}
END_TEST

/* No d tag, an empty d value, and ["d"] with no value (which event_parse
 * does not index, so it arrives with no d entry) all mean "". */
START_TEST(test_addressable_missing_d)
{
	static const struct event_tag d_empty[] = { TAG('d', "") };
	static const struct event_tag other[] = { TAG('t', "x") };

	ck_assert_int_eq(put(10, 1, 100, 30023, NULL, 0, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 200, 30023, d_empty, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(12, 1, 300, 30023, other, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(13, 1, 250, 30023, d_empty, 1, NULL), INGEST_SUPERSEDED);
	commit();
	ck_assert_str_eq(labels("1"), "12");
	ck_assert_int_eq(testdb_int(db, "SELECT addr = '' FROM events"), 1);
}
END_TEST

/*
 * An event as a client would send it, through event_parse(): the id is the
 * SHA-256 of the NIP-01 preimage (content empty, tags as given), the
 * signature is not checked there.  tags_json must need no escaping.
 */
static void parse_event(struct event *ev, uint8_t pk, int64_t created_at, uint32_t kind,
			const char *tags_json)
{
	char pre[512], json[1024], pk_hex[65], id_hex[65], sig_hex[129], reason[128];
	uint8_t pubkey[32], id[32];
	cJSON *obj;

	memset(pubkey, 0x11, sizeof(pubkey));
	pubkey[0] = pk;
	hex_encode(pubkey, 32, pk_hex);
	memset(sig_hex, '0', 128);
	sig_hex[128] = '\0';
	snprintf(pre, sizeof(pre), "[0,\"%s\",%lld,%u,%s,\"\"]", pk_hex, (long long)created_at,
		 kind, tags_json);
	SHA256((const unsigned char *)pre, strlen(pre), id);
	hex_encode(id, 32, id_hex);
	snprintf(json, sizeof(json),
		 "{\"id\":\"%s\",\"pubkey\":\"%s\",\"created_at\":%lld,\"kind\":%u,"
		 "\"tags\":%s,\"content\":\"\",\"sig\":\"%s\"}",
		 id_hex, pk_hex, (long long)created_at, kind, tags_json, sig_hex);
	obj = cJSON_Parse(json);
	ck_assert_ptr_nonnull(obj);
	ck_assert_msg(event_parse(obj, NULL, ev, reason, sizeof(reason)) == 0, "%s", reason);
	cJSON_Delete(obj);
}

static enum ingest_outcome put_parsed(uint8_t pk, int64_t created_at, uint32_t kind,
				      const char *tags_json)
{
	struct event ev;
	int64_t seq;
	enum ingest_outcome out;

	parse_event(&ev, pk, created_at, kind, tags_json);
	out = ingest_event(in, &ev, &seq, &why);
	event_free(&ev);
	return out;
}

/* The same from client JSON: ["d"] with no value, no d tag and ["d",""]
 * are one address. */
START_TEST(test_addressable_missing_d_parsed)
{
	ck_assert_int_eq(put_parsed(1, 100, 30000, "[[\"d\"]]"), INGEST_STORED);
	ck_assert_int_eq(put_parsed(1, 200, 30000, "[]"), INGEST_STORED);
	ck_assert_int_eq(put_parsed(1, 300, 30000, "[[\"d\",\"\"],[\"t\",\"x\"]]"), INGEST_STORED);
	ck_assert_int_eq(put_parsed(1, 250, 30000, "[[\"d\"]]"), INGEST_SUPERSEDED);
	ck_assert_int_eq(put_parsed(1, 50, 30000, "[[\"d\",\"other\"]]"), INGEST_STORED);
	commit();
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 2);
	ck_assert_int_eq(testdb_int(db, "SELECT created_at FROM events WHERE addr = ''"), 300);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE name = 't' AND value = x'78'"),
			 1);
}
END_TEST

/* Only the first d value is the address. */
START_TEST(test_addressable_first_d)
{
	static const struct event_tag xy[] = { TAG('d', "x"), TAG('d', "y") };
	static const struct event_tag y[] = { TAG('d', "y") };
	static const struct event_tag tx[] = { TAG('t', "y"), TAG('d', "x") };

	ck_assert_int_eq(put(10, 1, 100, 30001, xy, 2, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 200, 30001, y, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(12, 1, 300, 30001, tx, 2, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("1"), "11 12");
	ck_assert_int_eq(testdb_int(db, "SELECT addr = 'x' FROM events WHERE kind = 30001 AND "
				 "created_at = 300"),
			 1);
}
END_TEST

/* A d value containing a NUL byte is compared with its length. */
START_TEST(test_addressable_d_with_nul)
{
	static const struct event_tag a_nul[] = { { 'd', 3, "a\0b" } };
	static const struct event_tag a[] = { TAG('d', "a") };

	ck_assert_int_eq(put(10, 1, 100, 30000, a_nul, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 200, 30000, a, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(12, 1, 300, 30000, a_nul, 1, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("1"), "11 12");
}
END_TEST

/* Replaceable kinds ignore d: one version per (pubkey, kind). */
START_TEST(test_replaceable_ignores_d)
{
	static const struct event_tag d_a[] = { TAG('d', "a") };
	static const struct event_tag d_b[] = { TAG('d', "b") };

	ck_assert_int_eq(put(10, 1, 100, 10000, d_a, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 200, 10000, d_b, 1, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("1"), "11");
	ck_assert_int_eq(testdb_int(db, "SELECT addr = '' FROM events"), 1);
}
END_TEST

/* The rows of tags for seq, as "name=value@created_at;..." in insertion order. */
static const char *tag_rows(int64_t seq)
{
	static char out[512];
	char sql[128];
	sqlite3_stmt *st;
	size_t len = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT name, value, created_at, typeof(value) FROM tags WHERE seq = %lld "
		 "ORDER BY rowid",
		 (long long)seq);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		int n = sqlite3_column_bytes(st, 1);
		const char *v = sqlite3_column_blob(st, 1);

		ck_assert_str_eq((const char *)sqlite3_column_text(st, 3), "blob");
		len += (size_t)snprintf(out + len, sizeof(out) - len,
					"%s=", sqlite3_column_text(st, 0));
		for (int i = 0; i < n; i++)
			len += (size_t)snprintf(out + len, sizeof(out) - len, v[i] ? "%c" : "\\0",
						v[i]);
		len += (size_t)snprintf(out + len, sizeof(out) - len, "@%lld;",
					(long long)sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	return out;
}

START_TEST(test_tags_rows_written)
{
	static const struct event_tag tags[] = { TAG('e', "abc"), TAG('p', "def"),
						 TAG('E', "UP"),  TAG('e', "second"),
						 TAG('t', ""),	  { 'x', 3, "a\0b" } };
	int64_t seq = 0, seq2 = 0;

	ck_assert_int_eq(put(10, 1, 1234, 1, tags, 6, &seq), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 99, 1, NULL, 0, &seq2), INGEST_STORED);
	/* A duplicate writes no rows. */
	ck_assert_int_eq(put(10, 1, 1234, 1, tags, 6, NULL), INGEST_DUPLICATE);
	commit();
	ck_assert_str_eq(tag_rows(seq),
			 "e=abc@1234;p=def@1234;E=UP@1234;e=second@1234;t=@1234;x=a\\0b@1234;");
	ck_assert_str_eq(tag_rows(seq2), "");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 6);
}
END_TEST

START_TEST(test_tags_deleted_with_replaced)
{
	static const struct event_tag old_tags[] = { TAG('d', "k"), TAG('t', "old") };
	static const struct event_tag new_tags[] = { TAG('d', "k"), TAG('t', "new") };
	static const struct event_tag other[] = { TAG('d', "other"), TAG('t', "keep") };
	int64_t seq_old = 0, seq_new = 0, seq_other = 0;

	ck_assert_int_eq(put(10, 1, 100, 30000, old_tags, 2, &seq_old), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 100, 30000, other, 2, &seq_other), INGEST_STORED);
	ck_assert_int_eq(put(12, 1, 200, 30000, new_tags, 2, &seq_new), INGEST_STORED);
	/* A superseded version writes no rows either. */
	ck_assert_int_eq(put(13, 1, 150, 30000, old_tags, 2, NULL), INGEST_SUPERSEDED);
	commit();
	ck_assert_str_eq(tag_rows(seq_old), "");
	ck_assert_str_eq(tag_rows(seq_new), "d=k@200;t=new@200;");
	ck_assert_str_eq(tag_rows(seq_other), "d=other@100;t=keep@100;");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 4);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE seq NOT IN "
				 "(SELECT seq FROM events)"),
			 0);
}
END_TEST

START_TEST(test_replaceable_tags_replaced)
{
	static const struct event_tag p1[] = { TAG('p', "one") };
	static const struct event_tag p2[] = { TAG('p', "two"), TAG('p', "three") };
	int64_t seq = 0;

	ck_assert_int_eq(put(10, 1, 100, 3, p1, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(11, 1, 101, 3, p2, 2, &seq), INGEST_STORED);
	commit();
	ck_assert_str_eq(tag_rows(seq), "p=two@101;p=three@101;");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags"), 2);
}
END_TEST

/* A rolled-back transaction leaves nothing, and the same events then store. */
START_TEST(test_rollback)
{
	ck_assert_int_eq(put(10, 1, 100, 0, NULL, 0, NULL), INGEST_STORED);
	testdb_exec(db, "ROLLBACK");
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events"), 0);
	testdb_exec(db, "BEGIN");
	ck_assert_int_eq(put(10, 1, 100, 0, NULL, 0, NULL), INGEST_STORED);
	commit();
	ck_assert_str_eq(labels("1"), "10");
}
END_TEST

START_TEST(test_new_without_schema)
{
	sqlite3 *bare;

	log_set_level(LOG_ERROR); /* the failed prepare is logged as a warning */
	ck_assert_int_eq(sqlite3_open(":memory:", &bare), SQLITE_OK);
	ck_assert_ptr_null(ingest_new(bare));
	sqlite3_close(bare);
	ingest_free(NULL);
}
END_TEST

static Suite *ingest_suite(void)
{
	Suite *s = suite_create("ingest");
	TCase *tc = tcase_create("regular");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_regular_insert_then_duplicate);
	tcase_add_test(tc, test_regular_kinds_never_replace);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_new_without_schema);
	suite_add_tcase(s, tc);
	tc = tcase_create("replaceable");
	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_replaceable_keeps_newest, 0,
			    (int)(sizeof(replaceable_kinds) / sizeof(replaceable_kinds[0])));
	tcase_add_test(tc, test_expired_version_supersedes_nothing);
	tcase_add_test(tc, test_replaceable_newest_later_wins_seq);
	tcase_add_test(tc, test_tie_lowest_id_low_first);
	tcase_add_test(tc, test_tie_lowest_id_high_first);
	tcase_add_test(tc, test_tie_last_byte);
	tcase_add_test(tc, test_replaceable_ignores_d);
	suite_add_tcase(s, tc);
	tc = tcase_create("addressable");
	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_addressable_by_d);
	tcase_add_test(tc, test_addressable_missing_d);
	tcase_add_test(tc, test_addressable_missing_d_parsed);
	tcase_add_test(tc, test_addressable_first_d);
	tcase_add_test(tc, test_addressable_d_with_nul);
	suite_add_tcase(s, tc);
	tc = tcase_create("tags");
	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tags_rows_written);
	tcase_add_test(tc, test_tags_deleted_with_replaced);
	tcase_add_test(tc, test_replaceable_tags_replaced);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(ingest_suite());
}
