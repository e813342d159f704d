/*
 * test_query_sql.c - checks stored/query_sql.c differentially.
 *
 * A fixed-seed generator inserts about 2000 events through ingest_event()
 * into a real database (temp directory under /tmp): a small universe of
 * authors, kinds (regular, replaceable and addressable), single-letter tags
 * (lower and upper case, empty values, a value with a NUL byte, a quote,
 * 64-digit hex in lower and upper case) and
 * created_at values with many ties; some events are sent twice.  A plain
 * array mirrors what must be stored, applying the NIP-01 replacement rules
 * itself, and the test checks ingest's outcomes agree with it on the way.
 *
 * Then several hundred random filters (ids, authors, kinds, #x, since/until,
 * limit, combinations, empty lists, since > until) are run through
 * query_sql_prepare() at several max_seq values and through
 * query_sql_prepare_scoped() over random (min_seq, max_seq] ranges, and the
 * rows (seq, json) must equal the reference: filter_matches() over the
 * mirrored events with min_seq < seq <= max_seq, sorted by created_at
 * descending then id ascending (memcmp), cut to the limit.
 *
 * Filters that can never match (filter_is_empty) are included when they come
 * from empty lists or since > until: query_sql must return no rows for them.
 * The NIP-45 shapes are checked the same way: query_sql_prepare_count()
 * over one to three filters against the number of distinct matching events,
 * query_sql_prepare_pubkeys() against the matching events' pubkeys.  The
 * operator's shapes too: query_sql_prepare_export() paged by a seq cursor
 * against the matching events in seq order, and query_sql_prepare_delete()
 * deleting exactly as many events as the count statement counts.
 *
 * Not covered here: filters with `search` (they order by FTS relevance,
 * which the reference does not model) and expiration (no generated event
 * has one).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../common/hex.h"
#include "../../stored/db.h"
#include "../../stored/ingest.h"
#include "../../stored/query_sql.h"
#include "../support/splitmix.h"
#include "../support/suite.h"
#include "../support/testdb.h"
#include "../support/tmpdir.h"

#define NEVENTS 2000
#define NFILTERS 500
#define NO_LIMIT 100000u

/* ingest_event()'s refusal message; these tests only read it when refused. */
static const char *why;

static struct splitmix rng;

static int rng_chance(uint32_t percent)
{
	return splitmix_below(&rng, 100) < percent;
}

/* The universe events and filters draw from. */
#define NPUBKEYS 4
static uint8_t pubkeys[NPUBKEYS + 1][32]; /* the last one never writes */
static const uint32_t kinds[] = { 1, 7, 1111, 40000, 0, 10002, 30023 };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
static const char letters[] = "eptTd";
struct value {
	const char *s;
	uint32_t len;
};
/* The last three are 64 characters: lowercase hex (kept packed, tagval.h),
 * the same in uppercase and with one non-hex digit (both kept as text). */
#define HEX64 "ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01"
static const struct value values[] = {
	{ "x", 1 },    { "y", 1 },	  { "X", 1 },
	{ "", 0 },     { "a", 1 },	  { "a\0b", 3 },
	{ "'", 1 },    { "xy", 2 },	  { HEX64, 64 },
	{ "AB01CD23EF45AB01CD23EF45AB01CD23EF45AB01CD23EF45AB01CD23EF45AB01", 64 },
	{ "ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab01cd23ef45ab0g", 64 },
};
#define NVALUES (sizeof(values) / sizeof(values[0]))

/* The mirror of the events table. */
struct ref_event {
	struct event ev;
	int64_t seq;
	bool present;
};

static struct ref_event ref[NEVENTS];
static size_t nref;
static int64_t last_seq;

/* The directory every test's database lives in: made once by the parent
 * process (unchecked fixture) and removed with whatever is left in it, so a
 * failing test, whose forked child exits before its teardown, leaves no
 * litter in /tmp. */
TMPDIR_SUITE("test_query_sql")

static char db_path[TMPDIR_FILE_MAX];
static sqlite3 *db;

static void random_bytes(uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)splitmix_next(&rng);
}

/* A fresh random event number n (its JSON names n, so rows are traceable). */
static void random_event(struct event *ev, size_t n)
{
	struct event_tag tags[5];
	uint8_t id[32], sig[64];
	uint32_t ntags = splitmix_below(&rng, 5);
	char json[32];
	int len;

	random_bytes(id, sizeof(id));
	if (rng_chance(20))
		memset(id, 0, 20); /* long shared prefixes: ties need all 32 bytes */
	memset(sig, 0, sizeof(sig));
	for (uint32_t i = 0; i < ntags; i++) {
		const struct value *v = &values[splitmix_below(&rng, NVALUES)];

		tags[i] = (struct event_tag){ letters[splitmix_below(&rng, sizeof(letters) - 1)],
					      v->len, v->s };
	}
	len = snprintf(json, sizeof(json), "{\"n\":%zu}", n);
	if (event_build(ev, id, pubkeys[splitmix_below(&rng, NPUBKEYS)], sig,
			1000 + splitmix_below(&rng, 40), kinds[splitmix_below(&rng, NKINDS)], tags,
			ntags, json, (uint32_t)len))
		ck_abort_msg("event_build failed");
}

/* The address of a replaceable or addressable event: its first d value. */
static bool same_address(const struct event *a, const struct event *b)
{
	uint32_t alen, blen;
	const char *ad, *bd;

	if (a->kind != b->kind || memcmp(a->pubkey, b->pubkey, 32) != 0)
		return false;
	if (event_class_of(a->kind) != EVENT_ADDRESSABLE)
		return true;
	ad = event_tag_value(a, 'd', &alen);
	bd = event_tag_value(b, 'd', &blen);
	return alen == blen && (alen == 0 || memcmp(ad, bd, alen) == 0);
}

/* What ingest must answer for ev, given the mirror; retires the versions
 * ev replaces when it is stored. */
static enum ingest_outcome ref_ingest(const struct event *ev)
{
	for (size_t i = 0; i < nref; i++)
		if (ref[i].present && memcmp(ref[i].ev.id, ev->id, 32) == 0)
			return INGEST_DUPLICATE;
	if (event_class_of(ev->kind) == EVENT_REGULAR)
		return INGEST_STORED;
	for (size_t i = 0; i < nref; i++)
		if (ref[i].present && same_address(&ref[i].ev, ev) &&
		    !event_newer(ev->created_at, ev->id, ref[i].ev.created_at, ref[i].ev.id))
			return INGEST_SUPERSEDED;
	for (size_t i = 0; i < nref; i++)
		if (ref[i].present && same_address(&ref[i].ev, ev))
			ref[i].present = false;
	return INGEST_STORED;
}

static void ingest_one(struct ingest *in, struct event *ev)
{
	enum ingest_outcome want = ref_ingest(ev);
	int64_t seq = 0;

	enum ingest_outcome got = ingest_event(in, ev, &seq, &why);

	if (got != want)
		ck_abort_msg("event %zu (%s): ingest says %d, want %d", nref, ev->json, got, want);
	if (want != INGEST_STORED) {
		event_free(ev);
		return;
	}
	if (seq <= last_seq)
		ck_abort_msg("seq %lld after %lld", (long long)seq, (long long)last_seq);
	last_seq = seq;
	ref[nref].ev = *ev;
	ref[nref].seq = seq;
	ref[nref].present = true;
	nref++;
}

/* A copy of a random event that was stored once (so: a duplicate, or for a
 * replaced version, superseded). */
static int copy_stored(struct event *out)
{
	const struct event *e;

	if (nref == 0)
		return -1;
	e = &ref[splitmix_below(&rng, (uint32_t)nref)].ev;
	return event_build(out, e->id, e->pubkey, e->sig, e->created_at, e->kind, e->tags, e->ntags,
			   e->json, e->json_len);
}

static void populate(void)
{
	struct ingest *in;
	struct event ev;

	rng.state = 20240601;
	for (int i = 0; i <= NPUBKEYS; i++)
		random_bytes(pubkeys[i], 32);
	tmpdir_file(db_path, sizeof(db_path), tmp_dir, ".db");
	ck_assert_int_eq(db_open(db_path, true, "normal", &db), 0);
	in = ingest_new(db);
	ck_assert_ptr_nonnull(in);
	testdb_exec(db, "BEGIN");
	for (size_t n = 0; n < NEVENTS; n++) {
		if (!rng_chance(5) || copy_stored(&ev) != 0)
			random_event(&ev, n);
		ingest_one(in, &ev);
	}
	testdb_exec(db, "COMMIT");
	ingest_free(in);
}

static void setup(void)
{
	nref = 0;
	last_seq = 0;
	populate();
}

static void teardown(void)
{
	for (size_t i = 0; i < nref; i++)
		event_free(&ref[i].ev);
	db_close(db);
	testdb_unlink(db_path);
}

/* Reference: created_at descending, then id ascending. */
/* Set: check_range asks as a subscription on a relay with private kinds
 * (PRIVATE_KINDS) whose connection authenticated nviewers of viewers. */
static bool with_private;
static const uint32_t private_kinds[] = { 7, 40000 };
static uint8_t viewers[2][32];
static uint32_t nviewers;

/* What a subscription so restricted may read: not a private kind, or its
 * author or a p tag naming it (64 lowercase hex) is a viewer. */
static bool ref_visible(const struct event *ev)
{
	uint8_t key[32];
	bool private = false;

	if (!with_private)
		return true;
	for (size_t k = 0; k < sizeof(private_kinds) / sizeof(private_kinds[0]); k++)
		private |= ev->kind == private_kinds[k];
	if (!private)
		return true;
	for (uint32_t v = 0; v < nviewers; v++) {
		if (!memcmp(ev->pubkey, viewers[v], 32))
			return true;
		for (uint32_t t = 0; t < ev->ntags; t++)
			if (ev->tags[t].name == 'p' && ev->tags[t].value_len == 64 &&
			    !hex_decode(ev->tags[t].value, 64, key, 32) && !memcmp(key, viewers[v], 32))
				return true;
	}
	return false;
}

static int ref_order(const void *a, const void *b)
{
	const struct ref_event *x = *(const struct ref_event *const *)a;
	const struct ref_event *y = *(const struct ref_event *const *)b;

	if (x->ev.created_at != y->ev.created_at)
		return x->ev.created_at > y->ev.created_at ? -1 : 1;
	return memcmp(x->ev.id, y->ev.id, 32);
}

/* min_seq < seq <= max_seq; NO_MIN for no lower bound. */
#define NO_MIN INT64_MIN

static size_t ref_query(const struct filter *f, int64_t min_seq, int64_t max_seq, uint32_t limit,
			const struct ref_event **out)
{
	size_t n = 0;

	for (size_t i = 0; i < nref; i++)
		if (ref[i].present && ref[i].seq > min_seq && ref[i].seq <= max_seq &&
		    filter_matches(f, &ref[i].ev) && ref_visible(&ref[i].ev))
			out[n++] = &ref[i];
	qsort(out, n, sizeof(*out), ref_order);
	return n < limit ? n : limit;
}

/* When set, check_range takes its statements from this cache (what the
 * query threads do), so kept statements run again with other values. */
static struct stmt_cache *cached;

/* Set: check_range reads the range by seq, as a replay does. */
static bool by_seq_range;

/* The statement check_range runs: see above. */
static int check_statement(const struct filter *f, int64_t min_seq, int64_t max_seq,
			   uint32_t limit, sqlite3_stmt **st)
{
	struct query_scope scope = { min_seq == NO_MIN ? 0 : min_seq, max_seq, (int64_t)time(NULL),
				     limit, true, by_seq_range, NULL, 0, NULL, 0 };

	if (with_private) {
		scope.private_kinds = private_kinds;
		scope.nprivate = sizeof(private_kinds) / sizeof(private_kinds[0]);
		scope.viewers = (const uint8_t(*)[32])viewers;
		scope.nviewers = nviewers;
		/* query_sql_prepare() knows no privacy: go through the scoped one */
		if (min_seq == NO_MIN && !cached)
			return query_sql_prepare_scoped(db, f, &scope, st);
	}

	if (cached)
		return query_sql_take_scoped(db, cached, f, &scope, st);
	return min_seq == NO_MIN ? query_sql_prepare(db, f, max_seq, limit, st)
				 : query_sql_prepare_scoped(db, f, &scope, st);
}

/*
 * Runs f through query_sql_prepare (min_seq NO_MIN), query_sql_prepare_scoped
 * or query_sql_take_scoped (cached) and compares every row with the reference;
 * returns the number of rows.  what names the case in failure messages.
 * Plain comparisons with ck_abort_msg keep the loop cheap: each passing
 * ck_assert costs check a write to its parent.
 */
static size_t check_range(const struct filter *f, int64_t min_seq, int64_t max_seq,
			  uint32_t limit, const char *what)
{
	static const struct ref_event *want[NEVENTS];
	size_t nwant = ref_query(f, min_seq, max_seq, limit, want), row = 0;
	sqlite3_stmt *st = NULL;
	int rc = check_statement(f, min_seq, max_seq, limit, &st);

	if (rc != 0)
		ck_abort_msg("%s: query_sql_prepare failed", what);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(st, 0);
		const char *json = (const char *)sqlite3_column_text(st, 1);

		if (row >= nwant)
			ck_abort_msg("%s: extra row seq %lld (want %zu rows)", what, (long long)seq,
				     nwant);
		if (seq != want[row]->seq)
			ck_abort_msg("%s: row %zu has seq %lld, want %lld", what, row,
				     (long long)seq, (long long)want[row]->seq);
		if (sqlite3_column_bytes(st, 1) != (int)want[row]->ev.json_len ||
		    strcmp(json, want[row]->ev.json) != 0)
			ck_abort_msg("%s: row %zu has json %s, want %s", what, row, json,
				     want[row]->ev.json);
		row++;
	}
	if (rc != SQLITE_DONE || row != nwant)
		ck_abort_msg("%s: %zu rows (rc %d), want %zu", what, row, rc, nwant);
	if (cached)
		stmt_cache_release(cached, st);
	else
		sqlite3_finalize(st);
	return row;
}

static size_t check_filter(const struct filter *f, int64_t max_seq, uint32_t limit,
			   const char *what)
{
	return check_range(f, NO_MIN, max_seq, limit, what);
}

/* Random filter parts, allocated the way filter_free() releases them. */
static void random_ids(struct filter *f)
{
	f->has_ids = true;
	f->nids = splitmix_below(&rng, 5);
	f->ids = malloc(((size_t)f->nids + 1) * 32);
	for (uint32_t i = 0; i < f->nids; i++) {
		if (rng_chance(75))
			memcpy(f->ids[i], ref[splitmix_below(&rng, (uint32_t)nref)].ev.id, 32);
		else
			random_bytes(f->ids[i], 32);
	}
}

static void random_authors(struct filter *f)
{
	f->has_authors = true;
	f->nauthors = splitmix_below(&rng, 4);
	f->authors = malloc(((size_t)f->nauthors + 1) * 32);
	for (uint32_t i = 0; i < f->nauthors; i++)
		memcpy(f->authors[i], pubkeys[splitmix_below(&rng, NPUBKEYS + 1)], 32);
}

static void random_kinds(struct filter *f)
{
	f->has_kinds = true;
	f->nkinds = splitmix_below(&rng, 4);
	f->kinds = malloc(((size_t)f->nkinds + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < f->nkinds; i++)
		f->kinds[i] = rng_chance(90) ? kinds[splitmix_below(&rng, NKINDS)] : 5;
}

static void random_tag(struct filter_tag *t, char name)
{
	t->name = name;
	t->nvalues = rng_chance(5) ? 0 : 1 + splitmix_below(&rng, 3);
	t->values = calloc((size_t)t->nvalues + 1, sizeof(char *));
	t->lens = calloc((size_t)t->nvalues + 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < t->nvalues; i++) {
		const struct value *v = &values[splitmix_below(&rng, NVALUES)];

		t->values[i] = malloc(v->len + 1);
		memcpy(t->values[i], v->s, v->len + 1);
		t->lens[i] = v->len;
	}
}

static void random_tags(struct filter *f)
{
	uint32_t want = rng_chance(70) ? 1 : 2;
	char used[3] = { 0 };

	f->tags = calloc(want, sizeof(*f->tags));
	while (f->ntags < want) {
		char name =
		    rng_chance(90) ? letters[splitmix_below(&rng, sizeof(letters) - 1)] : 'q';

		if (strchr(used, name))
			continue;
		used[f->ntags] = name;
		random_tag(&f->tags[f->ntags++], name);
	}
}

static uint32_t random_filter(struct filter *f)
{
	static const uint32_t limits[] = { 0, 1, 2, 3, 5, 10, 37, 100, 5000 };

	filter_init(f);
	if (rng_chance(15))
		random_ids(f);
	if (rng_chance(40))
		random_authors(f);
	if (rng_chance(40))
		random_kinds(f);
	if (rng_chance(40))
		random_tags(f);
	if (rng_chance(30))
		f->since = 998 + splitmix_below(&rng, 45);
	if (rng_chance(30))
		f->until = 998 + splitmix_below(&rng, 45);
	if (rng_chance(50)) {
		f->has_limit = true;
		f->limit = limits[splitmix_below(&rng, sizeof(limits) / sizeof(limits[0]))];
	}
	return f->has_limit ? f->limit : NO_LIMIT;
}

/* Runs NFILTERS random filters, each at the whole table and at two random
 * (min_seq, max_seq] ranges; returns how many found something. */
static size_t run_random_filters(size_t *empty_filters)
{
	const int64_t max_seqs[] = {
		0, 1, last_seq / 3, last_seq / 2, last_seq - 1, last_seq, last_seq + 100
	};
	enum { NMAX_SEQS = sizeof(max_seqs) / sizeof(max_seqs[0]) };
	size_t nonempty = 0;
	char what[64];

	for (int i = 0; i < NFILTERS; i++) {
		struct filter f;
		uint32_t limit = random_filter(&f);

		*empty_filters += filter_is_empty(&f);
		/* Every filter at the full table, then another cut-off and a
		 * (min_seq, max_seq] range as a resumed subscription asks. */
		snprintf(what, sizeof(what), "filter %d at max_seq %lld", i, (long long)last_seq);
		nonempty += check_filter(&f, last_seq, limit, what) > 0;
		for (int k = 0; k < 2; k++) {
			int64_t max_seq = max_seqs[splitmix_below(&rng, NMAX_SEQS)];
			int64_t min_seq =
			    k == 0 ? NO_MIN : max_seqs[splitmix_below(&rng, NMAX_SEQS)] - 1;

			snprintf(what, sizeof(what), "filter %d at (%lld, %lld]", i,
				 (long long)min_seq, (long long)max_seq);
			check_range(&f, min_seq, max_seq, limit, what);
		}
		/* The same range read by seq, as a replay of lost deliveries. */
		{
			int64_t max_seq = max_seqs[splitmix_below(&rng, NMAX_SEQS)];
			int64_t min_seq = max_seqs[splitmix_below(&rng, NMAX_SEQS)] - 1;

			snprintf(what, sizeof(what), "filter %d by seq in (%lld, %lld]", i,
				 (long long)min_seq, (long long)max_seq);
			by_seq_range = true;
			check_range(&f, min_seq < 0 ? 0 : min_seq, max_seq, limit, what);
			by_seq_range = false;
		}
		filter_free(&f);
	}
	return nonempty;
}

START_TEST(test_differential)
{
	size_t nonempty, empty_filters = 0;

	rng.state = 77;
	nonempty = run_random_filters(&empty_filters);
	/* The generator must exercise both outcomes, or the test proves little. */
	ck_assert_uint_gt(nonempty, NFILTERS / 4);
	ck_assert_uint_lt(nonempty, NFILTERS - NFILTERS / 10);
	ck_assert_uint_gt(empty_filters, 10);
}
END_TEST

/* private_kinds: a limit counts only the private events the subscription
 * may read (author or p tag), with no viewer and with two, one of them a
 * p-tag value the events carry; the rest as the reference says. */
START_TEST(test_differential_private)
{
	size_t empty_filters = 0, hidden = 0, shown = 0;

	with_private = true;
	ck_assert_int_eq(hex_decode(HEX64, 64, viewers[1], 32), 0);
	memcpy(viewers[0], pubkeys[0], 32);
	for (nviewers = 0; nviewers <= 2; nviewers += 2) {
		rng.state = 79 + nviewers;
		ck_assert_uint_gt(run_random_filters(&empty_filters), NFILTERS / 8);
	}
	/* The check must have had private events to hide and to show. */
	for (size_t i = 0; i < nref; i++) {
		if (!ref[i].present || (ref[i].ev.kind != 7 && ref[i].ev.kind != 40000))
			continue;
		nviewers = 2;
		shown += ref_visible(&ref[i].ev);
		nviewers = 0;
		hidden += !ref_visible(&ref[i].ev);
	}
	ck_assert_uint_gt(shown, 10);
	ck_assert_uint_gt(hidden, shown);
	with_private = false;
}
END_TEST

/* The same comparisons through a small statement cache: kept statements
 * run again with other values, and others are evicted and prepared anew;
 * every answer must still be the reference's. */
START_TEST(test_differential_cached)
{
	size_t empty_filters = 0;

	cached = stmt_cache_new(db, 8);
	ck_assert_ptr_nonnull(cached);
	rng.state = 78;
	ck_assert_uint_gt(run_random_filters(&empty_filters), NFILTERS / 4);
	/* 3 statements per filter: some shapes repeat (reuse), more than 8
	 * differ (eviction). */
	ck_assert_uint_lt(stmt_cache_prepared(cached), 3 * (size_t)NFILTERS * 9 / 10);
	ck_assert_uint_gt(stmt_cache_prepared(cached), 8);
	stmt_cache_free(cached);
	cached = NULL;
}
END_TEST

static int key_order(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/* NIP-45 shapes: the count of distinct events matching any of n filters,
 * and the pubkey of every event matching one filter (compared as sorted
 * multisets), against the same reference. */
static void check_count_and_pubkeys(const struct filter *fs, uint32_t n,
				    const struct query_scope *scope, const char *what)
{
	static uint8_t want[NEVENTS][32], got[NEVENTS][32];
	size_t nwant = 0, ngot = 0;
	int64_t count = 0, sql_count;
	sqlite3_stmt *st = NULL;

	for (size_t i = 0; i < nref; i++) {
		bool any = false;

		if (!ref[i].present || ref[i].seq <= scope->min_seq || ref[i].seq > scope->max_seq)
			continue;
		for (uint32_t k = 0; k < n; k++)
			any |= filter_matches(&fs[k], &ref[i].ev);
		count += any;
		if (filter_matches(&fs[0], &ref[i].ev))
			memcpy(want[nwant++], ref[i].ev.pubkey, 32);
	}
	if (query_sql_prepare_count(db, fs, n, scope, &st) || sqlite3_step(st) != SQLITE_ROW)
		ck_abort_msg("%s: count statement failed", what);
	sql_count = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (sql_count != count)
		ck_abort_msg("%s: count %lld, want %lld", what, (long long)sql_count,
			     (long long)count);
	if (query_sql_prepare_pubkeys(db, &fs[0], scope, &st))
		ck_abort_msg("%s: pubkeys statement failed", what);
	while (sqlite3_step(st) == SQLITE_ROW && ngot < NEVENTS) {
		if (sqlite3_column_bytes(st, 0) != 32)
			ck_abort_msg("%s: pubkey of %d bytes", what, sqlite3_column_bytes(st, 0));
		memcpy(got[ngot++], sqlite3_column_blob(st, 0), 32);
	}
	sqlite3_finalize(st);
	qsort(want, nwant, 32, key_order);
	qsort(got, ngot, 32, key_order);
	if (ngot != nwant || memcmp(got, want, nwant * 32) != 0)
		ck_abort_msg("%s: %zu pubkeys, want %zu (or they differ)", what, ngot, nwant);
}

START_TEST(test_count_and_pubkeys_differential)
{
	const int64_t cuts[] = { 0, last_seq / 2, last_seq - 5, last_seq };
	struct query_scope scope = { 0, 0, (int64_t)time(NULL), 0, true, false, NULL, 0, NULL, 0 };
	struct filter fs[3];
	sqlite3_stmt *st = NULL;
	char what[64];

	ck_assert_int_eq(query_sql_prepare_count(db, fs, 0, &scope, &st), ERR_INVAL);
	rng.state = 555;
	for (int round = 0; round < 200; round++) {
		uint32_t n = 1 + splitmix_below(&rng, 3);

		for (uint32_t k = 0; k < n; k++)
			random_filter(&fs[k]);
		scope.max_seq = rng_chance(50) ? last_seq : cuts[splitmix_below(&rng, 4)];
		scope.min_seq = rng_chance(50) ? 0 : cuts[splitmix_below(&rng, 4)];
		snprintf(what, sizeof(what), "round %d, %u filters", round, n);
		check_count_and_pubkeys(fs, n, &scope, what);
		for (uint32_t k = 0; k < n; k++)
			filter_free(&fs[k]);
	}
}
END_TEST

/* Whether present event i matches any of the n filters within scope. */
static bool ref_matches_any(size_t i, const struct filter *fs, uint32_t n,
			    const struct query_scope *scope)
{
	bool any = false;

	if (!ref[i].present || ref[i].seq <= scope->min_seq || ref[i].seq > scope->max_seq)
		return false;
	for (uint32_t k = 0; k < n; k++)
		any |= filter_matches(&fs[k], &ref[i].ev);
	return any;
}

/* Pages through the export of fs (page rows at a time, the cursor being the
 * last seq seen) and compares with the reference: every matching event once,
 * in seq order, with its json.  Returns the number of rows. */
static size_t check_export(const struct filter *fs, uint32_t n, uint32_t page, const char *what)
{
	struct query_scope scope = { 0, INT64_MAX, (int64_t)time(NULL), page, true, false, NULL, 0, NULL, 0 };
	size_t want = 0, rows = 0, matches = 0;
	sqlite3_stmt *st;
	uint32_t got;

	do {
		got = 0;
		if (query_sql_prepare_export(db, fs, n, &scope, &st))
			ck_abort_msg("%s: export statement failed", what);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t seq = sqlite3_column_int64(st, 0);

			while (want < nref && (!ref_matches_any(want, fs, n, &scope) ||
					       ref[want].seq < seq))
				want++;
			if (want == nref || ref[want].seq != seq)
				ck_abort_msg("%s: row seq %lld is not the next match", what,
					     (long long)seq);
			if (strcmp((const char *)sqlite3_column_text(st, 1), ref[want].ev.json))
				ck_abort_msg("%s: json of seq %lld differs", what, (long long)seq);
			scope.min_seq = seq;
			got++;
			rows++;
		}
		sqlite3_finalize(st);
	} while (got == page);
	scope.min_seq = 0;
	for (size_t i = 0; i < nref; i++) /* nothing matching was skipped */
		matches += ref_matches_any(i, fs, n, &scope);
	if (rows != matches)
		ck_abort_msg("%s: %zu rows exported, %zu match", what, rows, matches);
	return rows;
}

START_TEST(test_export_differential)
{
	static const uint32_t pages[] = { 1, 7, 100, 5000 };
	struct filter fs[3];
	char what[64];

	/* ref[] is in seq order (ingest appends), which check_export relies on */
	for (size_t i = 1; i < nref; i++)
		ck_assert_int_lt(ref[i - 1].seq, ref[i].seq);
	filter_init(&fs[0]);
	check_export(fs, 1, 64, "no filter");
	rng.state = 4242;
	for (int round = 0; round < 120; round++) {
		uint32_t n = 1 + splitmix_below(&rng, 3);

		for (uint32_t k = 0; k < n; k++)
			random_filter(&fs[k]);
		snprintf(what, sizeof(what), "round %d, %u filters", round, n);
		check_export(fs, n, pages[splitmix_below(&rng, 4)], what);
		for (uint32_t k = 0; k < n; k++)
			filter_free(&fs[k]);
	}
}
END_TEST

/* The delete statement removes exactly what the count statement counts
 * (checked inside a transaction that is rolled back), tags included. */
START_TEST(test_delete_matches_count)
{
	struct query_scope scope = { 0, INT64_MAX, (int64_t)time(NULL), 0, true, false, NULL, 0, NULL, 0 };
	struct filter fs[3];
	sqlite3_stmt *st;
	int64_t counted, after, tags_left;
	char what[64];

	ck_assert_int_eq(query_sql_prepare_delete(db, fs, 0, &scope, &st), ERR_INVAL);
	rng.state = 9090;
	for (int round = 0; round < 60; round++) {
		uint32_t n = 1 + splitmix_below(&rng, 3);

		for (uint32_t k = 0; k < n; k++)
			random_filter(&fs[k]);
		snprintf(what, sizeof(what), "round %d, %u filters", round, n);
		ck_assert_int_eq(query_sql_prepare_count(db, fs, n, &scope, &st), 0);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		counted = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		testdb_exec(db, "BEGIN");
		ck_assert_int_eq(query_sql_prepare_delete(db, fs, n, &scope, &st), 0);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
		ck_assert_msg(sqlite3_changes(db) == counted, "%s: deleted %d, counted %lld", what,
			      sqlite3_changes(db), (long long)counted);
		ck_assert_int_eq(query_sql_prepare_count(db, fs, n, &scope, &st), 0);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		after = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		ck_assert_int_eq(after, 0);
		ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM tags WHERE seq NOT IN"
							" (SELECT seq FROM events)", -1, &st, NULL),
				 SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
		tags_left = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		ck_assert_int_eq(tags_left, 0);
		testdb_exec(db, "ROLLBACK");
		for (uint32_t k = 0; k < n; k++)
			filter_free(&fs[k]);
	}
}
END_TEST

/* As many filters as max_filters allows (1000): SQLite refuses a compound
 * SELECT of more than 500 terms, so the union is built in parts.  Count,
 * export and delete each agree with the reference. */
START_TEST(test_many_filters)
{
	const uint32_t n = 1000;
	struct query_scope scope = { 0, last_seq, (int64_t)time(NULL), 0, true, false, NULL, 0, NULL, 0 };
	struct filter *fs = calloc(n, sizeof(*fs));
	sqlite3_stmt *st;
	int64_t counted;

	ck_assert_ptr_nonnull(fs);
	rng.state = 31337;
	for (uint32_t k = 0; k < n; k++)
		random_filter(&fs[k]);
	check_count_and_pubkeys(fs, n, &scope, "1000 filters");
	check_export(fs, n, 300, "1000 filters");
	scope.max_seq = INT64_MAX;
	ck_assert_int_eq(query_sql_prepare_count(db, fs, n, &scope, &st), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	counted = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	ck_assert_int_gt(counted, 0);
	testdb_exec(db, "BEGIN");
	ck_assert_int_eq(query_sql_prepare_delete(db, fs, n, &scope, &st), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	ck_assert_int_eq(sqlite3_changes(db), counted);
	testdb_exec(db, "ROLLBACK");
	for (uint32_t k = 0; k < n; k++)
		filter_free(&fs[k]);
	free(fs);
}
END_TEST

/* The population itself: ties, replacements and duplicates really happen. */
START_TEST(test_population_shape)
{
	size_t present = 0, replaced = 0;

	for (size_t i = 0; i < nref; i++) {
		present += ref[i].present;
		replaced += !ref[i].present;
	}
	ck_assert_uint_gt(present, NEVENTS / 2);
	ck_assert_uint_gt(replaced, 50);
	ck_assert_uint_lt(nref, NEVENTS - 50); /* duplicates and superseded ones */
}
END_TEST

START_TEST(test_no_constraints)
{
	struct filter f;
	size_t all = 0;

	filter_init(&f);
	for (size_t i = 0; i < nref; i++)
		all += ref[i].present;
	ck_assert_uint_eq(check_filter(&f, last_seq, NO_LIMIT, "all"), all);
	ck_assert_uint_eq(check_filter(&f, last_seq, 0, "limit 0"), 0);
	ck_assert_uint_eq(check_filter(&f, 0, NO_LIMIT, "max_seq 0"), 0);
	ck_assert_uint_eq(check_filter(&f, last_seq, UINT32_MAX, "limit max"), all);
	ck_assert_uint_eq(check_filter(&f, last_seq, 7, "limit 7"), 7);
}
END_TEST

/* Seq ranges: (a, a] is empty, (0, last] is everything, and a tail range
 * holds exactly the events committed after its start. */
START_TEST(test_ranges)
{
	struct filter f;
	size_t all = 0, tail = 0;
	int64_t from = last_seq - 300;

	filter_init(&f);
	for (size_t i = 0; i < nref; i++) {
		all += ref[i].present;
		tail += ref[i].present && ref[i].seq > from;
	}
	ck_assert_uint_eq(check_range(&f, 0, last_seq, NO_LIMIT, "(0, last]"), all);
	ck_assert_uint_eq(check_range(&f, from, from, NO_LIMIT, "(a, a]"), 0);
	ck_assert_uint_eq(check_range(&f, last_seq, last_seq + 10, NO_LIMIT, "after last"), 0);
	ck_assert_uint_eq(check_range(&f, from, last_seq, NO_LIMIT, "tail"), tail);
	ck_assert_uint_gt(tail, 100);
	ck_assert_uint_eq(check_range(&f, from, last_seq, 5, "tail, limit 5"), 5);
}
END_TEST

/* Hundreds of values in one list still bind (one `?` each). */
START_TEST(test_long_lists)
{
	struct filter f;

	filter_init(&f);
	f.has_ids = true;
	f.nids = (uint32_t)nref;
	f.ids = malloc(nref * 32);
	for (size_t i = 0; i < nref; i++)
		memcpy(f.ids[i], ref[nref - 1 - i].ev.id, 32);
	f.has_kinds = true;
	f.nkinds = 1000;
	f.kinds = malloc(1000 * sizeof(uint32_t));
	for (uint32_t i = 0; i < 1000; i++)
		f.kinds[i] = i < 7 ? kinds[i] : 50000 + i;
	ck_assert_uint_gt(check_filter(&f, last_seq, NO_LIMIT, "long lists"), NEVENTS / 2);
	filter_free(&f);
}
END_TEST

/* Tag values are bound, not spliced: quotes select only themselves. */
START_TEST(test_values_are_bound)
{
	static const char *const nasty[] = { "'", "' OR 1=1 --", "\") OR (\"1\"=\"1", "x" };
	struct filter f;

	for (size_t k = 0; k < sizeof(nasty) / sizeof(nasty[0]); k++) {
		filter_init(&f);
		f.ntags = 1;
		f.tags = calloc(1, sizeof(*f.tags));
		f.tags[0].name = 't';
		f.tags[0].nvalues = 1;
		f.tags[0].values = calloc(1, sizeof(char *));
		f.tags[0].lens = calloc(1, sizeof(uint32_t));
		f.tags[0].values[0] = strdup(nasty[k]);
		f.tags[0].lens[0] = (uint32_t)strlen(nasty[k]);
		check_filter(&f, last_seq, NO_LIMIT, nasty[k]);
		filter_free(&f);
	}
}
END_TEST

/* Upper- and lower-case letters are different tags, and "a" is not "a\0b". */
START_TEST(test_tag_case_and_length)
{
	static const char names[] = { 't', 'T' };
	static const struct value probe[] = { { "a", 1 }, { "a\0b", 3 }, { "", 0 } };
	struct filter f;
	char what[32];

	for (size_t n = 0; n < 2; n++) {
		for (size_t v = 0; v < 3; v++) {
			filter_init(&f);
			f.ntags = 1;
			f.tags = calloc(1, sizeof(*f.tags));
			f.tags[0].name = names[n];
			f.tags[0].nvalues = 1;
			f.tags[0].values = calloc(1, sizeof(char *));
			f.tags[0].lens = calloc(1, sizeof(uint32_t));
			f.tags[0].values[0] = malloc(probe[v].len + 1);
			memcpy(f.tags[0].values[0], probe[v].s, probe[v].len + 1);
			f.tags[0].lens[0] = probe[v].len;
			snprintf(what, sizeof(what), "#%c value %zu", names[n], v);
			ck_assert_uint_gt(check_filter(&f, last_seq, NO_LIMIT, what), 0);
			filter_free(&f);
		}
	}
}
END_TEST

static Suite *query_sql_suite(void)
{
	Suite *s = suite_create("query_sql");
	TCase *tc = tcase_create("differential");

	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_many_filters);
	tcase_add_test(tc, test_population_shape);
	tcase_add_test(tc, test_no_constraints);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_long_lists);
	tcase_add_test(tc, test_values_are_bound);
	tcase_add_test(tc, test_tag_case_and_length);
	tcase_add_test(tc, test_differential);
	tcase_add_test(tc, test_differential_cached);
	tcase_add_test(tc, test_differential_private);
	tcase_add_test(tc, test_count_and_pubkeys_differential);
	tcase_add_test(tc, test_export_differential);
	tcase_add_test(tc, test_delete_matches_count);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(query_sql_suite());
}
