/*
 * test_erase.c - checks stored/erase.c (NIP-09 deletion, NIP-62 vanish)
 * through ingest.c, against a real SQLite database.
 *
 * Every test opens a fresh database with db_open() in a private mkdtemp()
 * directory, begins a transaction and ingests hand-built events
 * (event_build), then reads the events table back with its own SELECTs.
 * The expectations are written from the rules, not from the code:
 *
 *   - a kind 5 `e` tag (64 lowercase hex) deletes that id when the
 *     deletion's author wrote it, never a kind 5 or a kind 62; the id stays
 *     refused for that author ("blocked: ...") afterwards;
 *   - a kind 5 `a` tag "kind:pubkey:d" (d may be empty or contain ':')
 *     deletes every version of that address with created_at up to the
 *     deletion's, only when pubkey is the deletion's author, and older
 *     versions arriving later are refused; malformed coordinates (bad kind,
 *     bad or uppercase pubkey) are ignored;
 *   - a kind 62 that names this relay (EVENT_FLAG_VANISH_HERE) deletes
 *     everything of its author up to its created_at, deletions included,
 *     and gift wraps (kind 1059) p-tagged to the author, and refuses such
 *     events afterwards; the kind 62 itself stays; a kind 62 without the
 *     flag is only stored;
 *   - another author's kind 5 changes nothing;
 *   - every event of a pubkey in banned_pubkeys is refused with "blocked:
 *     this pubkey is banned" (kind 5 and 62 included, so they erase
 *     nothing); what it stored before stays; unbanned, it is accepted.
 *
 * Events are labelled by the first byte of their id (the rest is a fixed
 * filler) and authored by a one-byte "author" (the first byte of the
 * pubkey), so the table's contents read as "10 20".
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/hex.h"
#include "../../common/log.h"
#include "../../stored/db.h"
#include "../../stored/erase.h"
#include "../../stored/ingest.h"
#include "../support/ingestdb.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

enum { ALICE = 0xa1, BOB = 0xb0, CAROL = 0xc0 };

TMPDIR_SUITE("test_erase")
static char db_path[TMPDIR_FILE_MAX];
static sqlite3 *db;
static struct ingest *in;
static const char *why; /* the last refusal message */

/* ---------------------------------------------------------------- fixture */

static void setup(void)
{
	ingestdb_open(tmp_dir, db_path, &db, &in);
}

static void teardown(void)
{
	ingestdb_close(db_path, db, in);
}

/* Commits and opens the next transaction, as the writer does per batch. */
static void next_batch(void)
{
	testdb_exec(db, "COMMIT");
	testdb_exec(db, "BEGIN");
}

/* ---------------------------------------------------------------- events */

static void id_bytes(uint8_t label, uint8_t id[EVENT_ID_LEN])
{
	memset(id, 0x5a, EVENT_ID_LEN);
	id[0] = label;
}

static void pk_bytes(uint8_t author, uint8_t pk[EVENT_PUBKEY_LEN])
{
	memset(pk, 0x11, EVENT_PUBKEY_LEN);
	pk[0] = author;
}

/* The 64 lowercase hex digits of label's id / author's pubkey. */
static const char *id_hex(uint8_t label, char out[65])
{
	uint8_t id[EVENT_ID_LEN];

	id_bytes(label, id);
	hex_encode(id, sizeof(id), out);
	return out;
}

static const char *pk_hex(uint8_t author, char out[65])
{
	uint8_t pk[EVENT_PUBKEY_LEN];

	pk_bytes(author, pk);
	hex_encode(pk, sizeof(pk), out);
	return out;
}

/* Tags are given as "x" + value strings, e.g. "dhello" is ["d","hello"]. */
#define MAX_TAGS 8

static void make_event(struct event *ev, uint8_t label, uint8_t author, int64_t created_at,
		       uint32_t kind, const char *const *tags, uint32_t flags)
{
	uint8_t id[EVENT_ID_LEN], pk[EVENT_PUBKEY_LEN], sig[EVENT_SIG_LEN];
	struct event_tag t[MAX_TAGS];
	uint32_t ntags = 0;
	char json[96];
	int n;

	id_bytes(label, id);
	pk_bytes(author, pk);
	memset(sig, 0x22, sizeof(sig));
	for (; tags && tags[ntags]; ntags++) {
		ck_assert_uint_lt(ntags, MAX_TAGS);
		t[ntags] = (struct event_tag){ tags[ntags][0], (uint32_t)strlen(tags[ntags] + 1),
					       tags[ntags] + 1 };
	}
	n = snprintf(json, sizeof(json), "{\"label\":%u,\"kind\":%u}", label, kind);
	ck_assert_int_eq(event_build(ev, id, pk, sig, created_at, kind, t, ntags, json, (uint32_t)n),
			 0);
	ev->flags = flags;
}

/* Ingests one event; returns the outcome. */
static enum ingest_outcome put_flags(uint8_t label, uint8_t author, int64_t created_at,
				     uint32_t kind, const char *const *tags, uint32_t flags)
{
	struct event ev;
	int64_t seq = 0;
	enum ingest_outcome out;

	why = NULL;
	make_event(&ev, label, author, created_at, kind, tags, flags);
	out = ingest_event(in, &ev, &seq, &why);
	event_free(&ev);
	return out;
}

static enum ingest_outcome put(uint8_t label, uint8_t author, int64_t created_at, uint32_t kind,
			       const char *const *tags)
{
	return put_flags(label, author, created_at, kind, tags, 0);
}

/* Asserts the event is stored. */
#define STORE(label, author, created_at, kind, ...)                                                \
	do {                                                                                       \
		const char *const tags_[] = { __VA_ARGS__, NULL };                                 \
		ck_assert_int_eq(put(label, author, created_at, kind, tags_), INGEST_STORED);      \
	} while (0)

/* Asserts the event is refused with a "blocked:" message. */
static void assert_refused(enum ingest_outcome out)
{
	ck_assert_int_eq(out, INGEST_REFUSED);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strncmp(why, "blocked: ", 9) == 0, "refusal \"%s\" lacks blocked:", why);
}

/* "e<id of label>" in buf. */
static const char *e_tag(char buf[66], uint8_t label)
{
	char hex[65];

	snprintf(buf, 66, "e%s", id_hex(label, hex));
	return buf;
}

/* "a<kind>:<author's pubkey>:<d>" in buf (kind given as text, so
 * malformed ones can be written). */
static const char *a_tag(char *buf, size_t len, const char *kind, uint8_t author, const char *d)
{
	char hex[65];

	snprintf(buf, len, "a%s:%s:%s", kind, pk_hex(author, hex), d);
	return buf;
}

/* Labels of every stored event, ascending, as "10 20". */
static const char *stored_labels(void)
{
	static char out[1024];
	sqlite3_stmt *st;
	size_t len = 0;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT id FROM events ORDER BY id", -1, &st, NULL),
			 SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		const uint8_t *id = sqlite3_column_blob(st, 0);

		ck_assert_int_eq(sqlite3_column_bytes(st, 0), EVENT_ID_LEN);
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%u", len ? " " : "", id[0]);
	}
	sqlite3_finalize(st);
	return out;
}

/* ---------------------------------------------------------- NIP-09, e tags */

START_TEST(test_e_deletes_own_event)
{
	char e[66];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(11, ALICE, 100, 1, NULL);
	STORE(50, ALICE, 200, 5, e_tag(e, 10), NULL);
	ck_assert_str_eq(stored_labels(), "11 50");
}
END_TEST

/* The deleted event's tags leave with it (its full-text rows leave through
 * search_gone: test_search_index.c). */
START_TEST(test_e_takes_index_rows)
{
	struct event ev;
	int64_t seq = 0;
	char e[66];
	const char *const tags[] = { "tnostr", "pxyz", NULL };

	make_event(&ev, 10, ALICE, 100, 1, tags, 0);
	ck_assert_int_eq(event_set_content(&ev, "hello deletable words", 21), 0);
	ck_assert_int_eq(ingest_event(in, &ev, &seq, &why), INGEST_STORED);
	event_free(&ev);
	next_batch();
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE name = 't'"), 1);
	STORE(50, ALICE, 200, 5, e_tag(e, 10), NULL);
	next_batch();
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM events WHERE seq = 1"), 0);
	ck_assert_int_eq(testdb_int(db, "SELECT count(*) FROM tags WHERE name IN ('t', 'p')"), 0);
}
END_TEST

START_TEST(test_e_several_tags)
{
	char e1[66], e2[66], e3[66];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(11, ALICE, 100, 1, NULL);
	STORE(12, ALICE, 100, 1, NULL);
	STORE(50, ALICE, 200, 5, e_tag(e1, 10), e_tag(e2, 12), e_tag(e3, 99), NULL);
	ck_assert_str_eq(stored_labels(), "11 50");
}
END_TEST

/* Every storage class can be deleted by id, whatever the deletion's time. */
START_TEST(test_e_any_class)
{
	const char *const d[] = { "dx", NULL };
	char e1[66], e2[66], e3[66];

	STORE(10, ALICE, 100, 0, NULL);
	STORE(11, ALICE, 100, 10002, NULL);
	ck_assert_int_eq(put(12, ALICE, 100, 30023, d), INGEST_STORED);
	STORE(50, ALICE, 50, 5, e_tag(e1, 10), e_tag(e2, 11), e_tag(e3, 12), NULL);
	ck_assert_str_eq(stored_labels(), "50");
}
END_TEST

START_TEST(test_e_other_author_changes_nothing)
{
	char e[66];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(50, BOB, 200, 5, e_tag(e, 10), NULL);
	ck_assert_str_eq(stored_labels(), "10 50");
	/* Bob's request for an id Alice has not sent yet blocks nothing. */
	STORE(51, BOB, 200, 5, e_tag(e, 11), NULL);
	STORE(11, ALICE, 100, 1, NULL);
	ck_assert_str_eq(stored_labels(), "10 11 50 51");
}
END_TEST

/* A mixed request: the author's own targets go, another's stay. */
START_TEST(test_e_mixed_authors)
{
	char e1[66], e2[66];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(20, BOB, 100, 1, NULL);
	STORE(50, ALICE, 200, 5, e_tag(e1, 10), e_tag(e2, 20), NULL);
	ck_assert_str_eq(stored_labels(), "20 50");
}
END_TEST

START_TEST(test_e_republish_refused)
{
	char e[66];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(50, ALICE, 200, 5, e_tag(e, 10), NULL);
	next_batch();
	assert_refused(put(10, ALICE, 100, 1, NULL));
	ck_assert_str_eq(stored_labels(), "50");
}
END_TEST

/* A deletion that arrives before its target still applies to it. */
START_TEST(test_e_before_target)
{
	char e[66];

	STORE(50, ALICE, 200, 5, e_tag(e, 10), NULL);
	assert_refused(put(10, ALICE, 100, 1, NULL));
	ck_assert_str_eq(stored_labels(), "50");
}
END_TEST

/* Deleting a deletion does nothing: the named kind 5 stays, and one that
 * arrives after being named is stored and still applies. */
START_TEST(test_e_never_deletes_deletion)
{
	char e1[66], e2[66], e3[66];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(50, ALICE, 200, 5, e_tag(e1, 10), NULL);
	STORE(51, ALICE, 300, 5, e_tag(e2, 50), NULL);
	ck_assert_str_eq(stored_labels(), "50 51");
	/* sending the surviving deletion again is a duplicate, not a refusal */
	ck_assert_int_eq(put(50, ALICE, 200, 5, (const char *const[]){ e1, NULL }), INGEST_DUPLICATE);

	STORE(11, ALICE, 100, 1, NULL);
	STORE(52, ALICE, 300, 5, e_tag(e2, 53), NULL);
	STORE(53, ALICE, 200, 5, e_tag(e3, 11), NULL);
	ck_assert_str_eq(stored_labels(), "50 51 52 53");
}
END_TEST

/* A kind 5 against a request to vanish does nothing, before or after it. */
START_TEST(test_e_never_deletes_vanish)
{
	char e1[66], e2[66];

	STORE(62, ALICE, 100, 62, NULL); /* naming another relay: no flag */
	STORE(50, ALICE, 200, 5, e_tag(e1, 62), NULL);
	ck_assert_str_eq(stored_labels(), "50 62");
	ck_assert_int_eq(put(62, ALICE, 100, 62, NULL), INGEST_DUPLICATE);

	/* named first, arriving later: stored, and carried out */
	STORE(10, ALICE, 100, 1, NULL);
	STORE(51, ALICE, 200, 5, e_tag(e2, 63), NULL);
	ck_assert_int_eq(put_flags(63, ALICE, 150, 62, NULL, EVENT_FLAG_VANISH_HERE), INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "50 51 62 63"); /* 10 vanished */
}
END_TEST

/* Only 64 lowercase hex digits name an id. */
START_TEST(test_e_malformed_ignored)
{
	char hex[65], upper[66], short_[66], long_[70];

	STORE(10, ALICE, 100, 1, NULL);
	id_hex(10, hex);
	snprintf(upper, sizeof(upper), "e%s", hex);
	for (char *c = upper + 1; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
	snprintf(short_, sizeof(short_), "e%.63s", hex);
	snprintf(long_, sizeof(long_), "e%s0", hex);
	STORE(50, ALICE, 200, 5, upper, short_, long_, "e", "exyz", NULL);
	ck_assert_str_eq(stored_labels(), "10 50");
	/* and none of them left a tombstone for the real id */
	next_batch();
	ck_assert_int_eq(put(10, ALICE, 100, 1, NULL), INGEST_DUPLICATE);
}
END_TEST

/* The refusal is per author: the same id from someone else is not blocked
 * by Alice's tombstone. */
START_TEST(test_e_tombstone_is_per_author)
{
	char e[66];

	STORE(50, ALICE, 200, 5, e_tag(e, 10), NULL);
	STORE(10, BOB, 100, 1, NULL);
	ck_assert_str_eq(stored_labels(), "10 50");
}
END_TEST

/* ---------------------------------------------------------- NIP-09, a tags */

START_TEST(test_a_deletes_versions_up_to)
{
	char a[200];

	STORE(20, ALICE, 100, 30023, "dpost");
	STORE(21, ALICE, 100, 30023, "dother");
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), "30023", ALICE, "post"), NULL);
	ck_assert_str_eq(stored_labels(), "21 50");
	next_batch();
	/* older and equally old versions are refused, newer ones stored */
	assert_refused(put(22, ALICE, 120, 30023, (const char *const[]){ "dpost", NULL }));
	assert_refused(put(23, ALICE, 150, 30023, (const char *const[]){ "dpost", NULL }));
	ck_assert_int_eq(put(24, ALICE, 151, 30023, (const char *const[]){ "dpost", NULL }),
			 INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "21 24 50");
}
END_TEST

/* A version newer than the deletion survives it. */
START_TEST(test_a_newer_version_survives)
{
	char a[200];

	STORE(20, ALICE, 200, 30023, "dpost");
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), "30023", ALICE, "post"), NULL);
	ck_assert_str_eq(stored_labels(), "20 50");
}
END_TEST

/* A later deletion of the same address moves the bound forward; an
 * earlier one never moves it back. */
START_TEST(test_a_bound_only_grows)
{
	char a[200];

	STORE(50, ALICE, 300, 5, a_tag(a, sizeof(a), "30023", ALICE, "post"), NULL);
	STORE(51, ALICE, 100, 5, a_tag(a, sizeof(a), "30023", ALICE, "post"), NULL);
	assert_refused(put(20, ALICE, 250, 30023, (const char *const[]){ "dpost", NULL }));
	ck_assert_int_eq(put(21, ALICE, 301, 30023, (const char *const[]){ "dpost", NULL }),
			 INGEST_STORED);
}
END_TEST

START_TEST(test_a_other_author_changes_nothing)
{
	char a[200];

	STORE(20, ALICE, 100, 30023, "dpost");
	/* Bob naming Alice's address: nothing deleted, no bound recorded */
	STORE(50, BOB, 150, 5, a_tag(a, sizeof(a), "30023", ALICE, "post"), NULL);
	ck_assert_str_eq(stored_labels(), "20 50");
	ck_assert_int_eq(put(21, ALICE, 90, 30023, (const char *const[]){ "dpost", NULL }),
			 INGEST_SUPERSEDED);
	ck_assert_int_eq(put(22, ALICE, 110, 30023, (const char *const[]){ "dpost", NULL }),
			 INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "22 50");
}
END_TEST

/* "30023:<pk>:" is the address with d = "", which an event without a d tag
 * also has; it leaves other d values alone. */
START_TEST(test_a_empty_d)
{
	char a[200];

	STORE(20, ALICE, 100, 30023, NULL);
	STORE(21, ALICE, 100, 30024, "d");
	STORE(22, ALICE, 100, 30023, "dx");
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), "30023", ALICE, ""), NULL);
	ck_assert_str_eq(stored_labels(), "21 22 50");
	assert_refused(put(23, ALICE, 120, 30023, (const char *const[]){ "d", NULL }));
	assert_refused(put(24, ALICE, 120, 30023, NULL));
}
END_TEST

/* d may contain ':'; everything after the second colon is d. */
START_TEST(test_a_d_with_colons)
{
	char a[200];

	STORE(20, ALICE, 100, 30023, "da:b");
	STORE(21, ALICE, 100, 30023, "da");
	STORE(22, ALICE, 100, 30023, "da:b:");
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), "30023", ALICE, "a:b"), NULL);
	ck_assert_str_eq(stored_labels(), "21 22 50");
}
END_TEST

/* Replaceable kinds have the address "kind:pubkey:" too. */
START_TEST(test_a_replaceable)
{
	char a[200];

	STORE(20, ALICE, 100, 10002, NULL);
	STORE(21, ALICE, 100, 0, NULL);
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), "10002", ALICE, ""), NULL);
	ck_assert_str_eq(stored_labels(), "21 50");
	assert_refused(put(22, ALICE, 140, 10002, NULL));
	ck_assert_int_eq(put(23, ALICE, 160, 10002, NULL), INGEST_STORED);
}
END_TEST

/* Regular events have no address: an `a` tag with a regular kind deletes
 * none of them and refuses none later. */
START_TEST(test_a_regular_kind_no_effect)
{
	char a[200];

	STORE(10, ALICE, 100, 1, NULL);
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), "1", ALICE, ""), NULL);
	ck_assert_str_eq(stored_labels(), "10 50");
	ck_assert_int_eq(put(11, ALICE, 120, 1, NULL), INGEST_STORED);
}
END_TEST

/* Malformed coordinates are ignored entirely. */
static const char *const bad_kinds[] = {
	"", "x", "30023x", "x30023", "70000", "65536", "-30023", "+30023", " 30023",
	"99999999999999999999999", "3.0023e4",
};

START_TEST(test_a_malformed_kind)
{
	char a[200];

	STORE(20, ALICE, 100, 30023, "dpost");
	STORE(50, ALICE, 150, 5, a_tag(a, sizeof(a), bad_kinds[_i], ALICE, "post"), NULL);
	ck_assert_msg(strcmp(stored_labels(), "20 50") == 0, "tag \"%s\" deleted: left %s", a + 1,
		      stored_labels());
	ck_assert_int_eq(put(21, ALICE, 120, 30023, (const char *const[]){ "dpost", NULL }),
			 INGEST_STORED);
}
END_TEST

START_TEST(test_a_malformed_pubkey)
{
	char hex[65], upper[65], tags[8][200];
	const char *t[9];
	int n = 0;

	pk_hex(ALICE, hex);
	strcpy(upper, hex);
	for (char *c = upper; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
	ck_assert_str_ne(upper, hex);
	snprintf(tags[n++], 200, "a30023:%s:post", upper);          /* uppercase */
	snprintf(tags[n++], 200, "a30023:%.63s:post", hex);         /* 63 digits */
	snprintf(tags[n++], 200, "a30023:%s0:post", hex);           /* 65 digits */
	snprintf(tags[n++], 200, "a30023:%.62sxy:post", hex);       /* not hex */
	snprintf(tags[n++], 200, "a30023:%s", hex);                 /* no second colon */
	snprintf(tags[n++], 200, "a30023::%s:post", hex);           /* empty field */
	snprintf(tags[n++], 200, "a30023:%s;post", hex);            /* wrong separator */
	snprintf(tags[n++], 200, "a30023");                         /* kind only */
	for (int i = 0; i < n; i++)
		t[i] = tags[i];
	t[n] = NULL;
	STORE(20, ALICE, 100, 30023, "dpost");
	ck_assert_int_eq(put(50, ALICE, 150, 5, t), INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "20 50");
	ck_assert_int_eq(put(21, ALICE, 120, 30023, (const char *const[]){ "dpost", NULL }),
			 INGEST_STORED);
}
END_TEST

/* ------------------------------------------------------------------ NIP-62 */

START_TEST(test_vanish_deletes_everything_up_to)
{
	char e[66], pa[66], pb[66], hex[65];

	snprintf(pa, sizeof(pa), "p%s", pk_hex(ALICE, hex));
	snprintf(pb, sizeof(pb), "p%s", pk_hex(BOB, hex));
	STORE(10, ALICE, 100, 1, NULL);
	STORE(11, ALICE, 100, 0, NULL);
	STORE(12, ALICE, 100, 30023, "dx");
	STORE(13, ALICE, 50, 1, NULL);
	STORE(14, ALICE, 300, 1, NULL);               /* after the request */
	STORE(50, ALICE, 110, 5, e_tag(e, 13), NULL); /* a deletion: goes too */
	STORE(20, BOB, 100, 1, NULL);                 /* someone else's */
	STORE(30, CAROL, 100, 1059, pa);              /* gift wrap to Alice */
	STORE(31, CAROL, 100, 1059, pb);              /* gift wrap to Bob */
	STORE(32, CAROL, 250, 1059, pa);              /* to Alice, after */
	STORE(33, CAROL, 100, 1, pa);                 /* not a gift wrap */
	ck_assert_int_eq(put_flags(62, ALICE, 200, 62, NULL, EVENT_FLAG_VANISH_HERE), INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "14 20 31 32 33 62");
}
END_TEST

START_TEST(test_vanish_refuses_afterwards)
{
	char pa[66], hex[65];

	snprintf(pa, sizeof(pa), "p%s", pk_hex(ALICE, hex));
	STORE(10, ALICE, 100, 1, NULL);
	ck_assert_int_eq(put_flags(62, ALICE, 200, 62, NULL, EVENT_FLAG_VANISH_HERE), INGEST_STORED);
	next_batch();
	assert_refused(put(10, ALICE, 100, 1, NULL));
	assert_refused(put(11, ALICE, 200, 30023, (const char *const[]){ "dx", NULL }));
	assert_refused(put(12, ALICE, 150, 5, NULL));
	assert_refused(put(30, CAROL, 199, 1059, (const char *const[]){ pa, NULL }));
	ck_assert_int_eq(put(13, ALICE, 201, 1, NULL), INGEST_STORED);
	ck_assert_int_eq(put(31, CAROL, 201, 1059, (const char *const[]){ pa, NULL }), INGEST_STORED);
	ck_assert_int_eq(put(32, CAROL, 100, 1, (const char *const[]){ pa, NULL }), INGEST_STORED);
	ck_assert_int_eq(put(20, BOB, 100, 1, NULL), INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "13 20 31 32 62");
}
END_TEST

/* The bound is the latest request's; an earlier request arriving later is
 * stored but does not lower it. */
START_TEST(test_vanish_bound_only_grows)
{
	ck_assert_int_eq(put_flags(62, ALICE, 200, 62, NULL, EVENT_FLAG_VANISH_HERE), INGEST_STORED);
	ck_assert_int_eq(put_flags(63, ALICE, 100, 62, NULL, EVENT_FLAG_VANISH_HERE), INGEST_STORED);
	assert_refused(put(10, ALICE, 150, 1, NULL));
	ck_assert_str_eq(stored_labels(), "62 63");
}
END_TEST

/* A kind 62 for another relay is only stored. */
START_TEST(test_vanish_elsewhere_is_only_stored)
{
	STORE(10, ALICE, 100, 1, NULL);
	STORE(62, ALICE, 200, 62, NULL); /* relayd did not set VANISH_HERE */
	ck_assert_str_eq(stored_labels(), "10 62");
	ck_assert_int_eq(put(11, ALICE, 150, 1, NULL), INGEST_STORED);
}
END_TEST

/* Another author's kind 62 takes nothing of Alice's. */
START_TEST(test_vanish_only_own)
{
	char pa[66], hex[65];

	snprintf(pa, sizeof(pa), "p%s", pk_hex(ALICE, hex));
	STORE(10, ALICE, 100, 1, NULL);
	ck_assert_int_eq(put_flags(62, BOB, 200, 62, (const char *const[]){ pa, NULL },
				   EVENT_FLAG_VANISH_HERE),
			 INGEST_STORED);
	ck_assert_str_eq(stored_labels(), "10 62");
	ck_assert_int_eq(put(11, ALICE, 150, 1, NULL), INGEST_STORED);
}
END_TEST

/* ------------------------------------------------------- erase.h directly */

/* ------------------------------------------------------------------ bans */

static void ban(uint8_t author)
{
	char sql[200], hex[65];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO banned_pubkeys(pubkey, reason, created_at) VALUES(x'%s', 'spam', 1)",
		 pk_hex(author, hex));
	testdb_exec(db, sql);
}

/* Every event of a banned author is refused, whatever its kind, with the
 * ban's message; other authors are not; what was stored before stays. */
START_TEST(test_ban_refuses_every_kind)
{
	static const uint32_t every_class[] = { 1, 0, 3, 5, 62, 1059, 10002, 30023 };
	char e[66];

	STORE(10, ALICE, 100, 1, "tx");
	ban(ALICE);
	next_batch();
	for (size_t i = 0; i < sizeof(every_class) / sizeof(every_class[0]); i++) {
		assert_refused(put_flags((uint8_t)(20 + i), ALICE, 200, every_class[i],
					 (const char *const[]){ e_tag(e, 10), NULL },
					 EVENT_FLAG_VANISH_HERE));
		ck_assert_str_eq(why, "blocked: this pubkey is banned");
	}
	STORE(40, BOB, 200, 1, "tx");
	/* the refused kind 5 and 62 took nothing away */
	ck_assert_str_eq(stored_labels(), "10 40");
}
END_TEST

/* Lifting the ban lets the author publish again. */
START_TEST(test_unban)
{
	char sql[200], hex[65];

	ban(BOB);
	assert_refused(put(10, BOB, 100, 1, NULL));
	snprintf(sql, sizeof(sql), "DELETE FROM banned_pubkeys WHERE pubkey = x'%s'",
		 pk_hex(BOB, hex));
	testdb_exec(db, sql);
	STORE(10, BOB, 100, 1, "tx");
	ck_assert_str_eq(stored_labels(), "10");
}
END_TEST

/* erase_refuses() and erase_apply() on the writer's connection without
 * ingest: the refusal message, and events that are not requests. */
START_TEST(test_erase_api)
{
	struct erase *er = erase_new(db);
	struct event ev, del;
	const char *msg = NULL;
	char e[66];

	ck_assert_ptr_nonnull(er);
	make_event(&ev, 10, ALICE, 100, 1, NULL, 0);
	ck_assert_int_eq(erase_refuses(er, &ev, &msg), 0);
	ck_assert_int_eq(erase_apply(er, &ev), 0); /* not a request: nothing */
	make_event(&del, 50, ALICE, 200, 5, (const char *const[]){ e_tag(e, 10), NULL }, 0);
	ck_assert_int_eq(erase_apply(er, &del), 0);
	ck_assert_int_eq(erase_refuses(er, &ev, &msg), 1);
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(strncmp(msg, "blocked: ", 9) == 0, "%s", msg);
	event_free(&ev);
	event_free(&del);
	erase_free(er);
	erase_free(NULL);
}
END_TEST

START_TEST(test_erase_new_without_schema)
{
	sqlite3 *bare;

	log_set_level(LOG_ERROR);
	ck_assert_int_eq(sqlite3_open(":memory:", &bare), SQLITE_OK);
	ck_assert_ptr_null(erase_new(bare));
	sqlite3_close(bare);
}
END_TEST

static TCase *tcase_with_db(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

static Suite *erase_suite(void)
{
	Suite *s = suite_create("erase");
	TCase *tc = tcase_with_db("e tags");

	tcase_add_test(tc, test_e_deletes_own_event);
	tcase_add_test(tc, test_e_takes_index_rows);
	tcase_add_test(tc, test_e_several_tags);
	tcase_add_test(tc, test_e_any_class);
	tcase_add_test(tc, test_e_other_author_changes_nothing);
	tcase_add_test(tc, test_e_mixed_authors);
	tcase_add_test(tc, test_e_republish_refused);
	tcase_add_test(tc, test_e_before_target);
	tcase_add_test(tc, test_e_never_deletes_deletion);
	tcase_add_test(tc, test_e_never_deletes_vanish);
	tcase_add_test(tc, test_e_malformed_ignored);
	tcase_add_test(tc, test_e_tombstone_is_per_author);
	suite_add_tcase(s, tc);

	tc = tcase_with_db("a tags");
	tcase_add_test(tc, test_a_deletes_versions_up_to);
	tcase_add_test(tc, test_a_newer_version_survives);
	tcase_add_test(tc, test_a_bound_only_grows);
	tcase_add_test(tc, test_a_other_author_changes_nothing);
	tcase_add_test(tc, test_a_empty_d);
	tcase_add_test(tc, test_a_d_with_colons);
	tcase_add_test(tc, test_a_replaceable);
	tcase_add_test(tc, test_a_regular_kind_no_effect);
	tcase_add_loop_test(tc, test_a_malformed_kind, 0,
			    (int)(sizeof(bad_kinds) / sizeof(bad_kinds[0])));
	tcase_add_test(tc, test_a_malformed_pubkey);
	suite_add_tcase(s, tc);

	tc = tcase_with_db("vanish");
	tcase_add_test(tc, test_vanish_deletes_everything_up_to);
	tcase_add_test(tc, test_vanish_refuses_afterwards);
	tcase_add_test(tc, test_vanish_bound_only_grows);
	tcase_add_test(tc, test_vanish_elsewhere_is_only_stored);
	tcase_add_test(tc, test_vanish_only_own);
	suite_add_tcase(s, tc);

	tc = tcase_with_db("bans");
	tcase_add_test(tc, test_ban_refuses_every_kind);
	tcase_add_test(tc, test_unban);
	suite_add_tcase(s, tc);

	tc = tcase_with_db("api");
	tcase_add_test(tc, test_erase_api);
	tcase_add_test(tc, test_erase_new_without_schema);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(erase_suite());
}
