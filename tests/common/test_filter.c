/*
 * test_filter.c - checks common/filter.c, common/filter_parse.c and
 * common/filter_match.c: every field and every rejection of the parser,
 * limit clamping, matching truth tables, copy and free, and a differential
 * test of parse+match against a direct evaluation of the JSON filter on
 * random inputs.
 *
 * The one signed event used (kind 7) was made with nostr-tools 2.x
 * finalizeEvent() and the secret key 0x0102...1f20, as described in
 * test_event.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../common/hex.h"
#include "../../common/json.h"
#include "../support/suite.h"

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HEX_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define PK "84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0"
#define ID7 "265e4b1f66b24541bc0e38e71cf71f33e8070104c458a4522dd75f1fa5a12bb3"

/* kind 7 at 1700000500; tags t(first,second), t(Nostr), p(HEX_B),
 * e(HEX_A,"",reply), r(""), x alone, title(no). */
static const char event7[] =
	"{\"id\":\"265e4b1f66b24541bc0e38e71cf71f33e8070104c458a4522dd75f1fa5a12bb3\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":1700000500,\"kind\":7,"
	"\"tags\":[[\"t\",\"first\",\"second\"],[\"t\",\"Nostr\"],[\"p\",\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"],[\"e\",\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"\",\"reply\"],[\"r\",\"\"],[\"x\"],[\"title\",\"no\"]],"
	"\"content\":\"+\","
	"\"sig\":\"a33178e8939ec6246e45bbd02cb2846cffaa4a455026ec097d714a4fc0287ae778fdc2b1041ca66ddddf5a73af1715ec353d4883c0629f191db17132d1791f48\"}";

/* filter_parse() on text read as the relay reads it (json_parse()). */
static int parse_filter(const char *text, const struct filter_limits *lim, struct filter *f,
			char *reason, size_t reason_len)
{
	cJSON *obj = json_parse(text, strlen(text), true);
	int rc;

	ck_assert_msg(obj != NULL, "test JSON does not parse: %s", text);
	rc = filter_parse(obj, lim, f, reason, reason_len);
	cJSON_Delete(obj);
	return rc;
}

static void parse_ok(const char *text, const struct filter_limits *lim, struct filter *f)
{
	char reason[256];
	int rc = parse_filter(text, lim, f, reason, sizeof(reason));

	ck_assert_msg(rc == 0, "%s: rc %d, %s", text, rc, reason);
}

static void load_event7(struct event *ev)
{
	cJSON *obj = cJSON_Parse(event7);
	char reason[128];

	ck_assert_int_eq(event_parse(obj, NULL, ev, reason, sizeof(reason)), 0);
	cJSON_Delete(obj);
}

/* True when the filter in text matches event7. */
static bool matches7(const char *text)
{
	struct filter f;
	struct event ev;
	bool hit;

	parse_ok(text, NULL, &f);
	load_event7(&ev);
	hit = filter_matches(&f, &ev);
	if (hit)
		ck_assert_msg(!filter_is_empty(&f), "%s matched but is empty", text);
	event_free(&ev);
	filter_free(&f);
	return hit;
}

static bool is_pristine(const struct filter *f)
{
	return !f->ids && !f->nids && !f->has_ids && !f->authors && !f->has_authors && !f->kinds &&
	       !f->has_kinds && !f->tags && !f->ntags && f->since == INT64_MIN &&
	       f->until == INT64_MAX && !f->has_limit && !f->search;
}

START_TEST(test_parse_empty)
{
	struct filter f;
	struct event ev;

	parse_ok("{}", NULL, &f);
	ck_assert(is_pristine(&f));
	ck_assert(!filter_is_empty(&f));
	load_event7(&ev);
	ck_assert(filter_matches(&f, &ev));
	event_free(&ev);
	filter_free(&f);
}
END_TEST

START_TEST(test_parse_all_fields)
{
	static const char text[] =
		"{\"ids\":[\"" HEX_A "\",\"" HEX_B "\"],\"authors\":[\"" PK "\"],"
		"\"kinds\":[0,1,65535,1],\"#e\":[\"" HEX_C "\"],\"#p\":[],\"#t\":[\"x\",\"\",\"\\u00e9\"],"
		"\"#T\":[\"not hex\"],\"since\":-5,\"until\":1700000000,\"limit\":20,"
		"\"search\":\"best nostr\"}";
	struct filter f;
	uint8_t pk[32];

	parse_ok(text, NULL, &f);
	ck_assert(f.has_ids);
	ck_assert_uint_eq(f.nids, 2);
	ck_assert_uint_eq(f.ids[0][0], 0xaa);
	ck_assert_uint_eq(f.ids[1][31], 0xbb);
	ck_assert(f.has_authors);
	ck_assert_uint_eq(f.nauthors, 1);
	hex_decode(PK, 64, pk, 32);
	ck_assert_mem_eq(f.authors[0], pk, 32);
	ck_assert(f.has_kinds);
	ck_assert_uint_eq(f.nkinds, 4);
	ck_assert_uint_eq(f.kinds[2], 65535);
	ck_assert_uint_eq(f.ntags, 4);
	ck_assert_int_eq(f.tags[0].name, 'e');
	ck_assert_uint_eq(f.tags[0].nvalues, 1);
	ck_assert_str_eq(f.tags[0].values[0], HEX_C);
	ck_assert_uint_eq(f.tags[0].lens[0], 64);
	ck_assert_int_eq(f.tags[1].name, 'p');
	ck_assert_uint_eq(f.tags[1].nvalues, 0);
	ck_assert_int_eq(f.tags[2].name, 't');
	ck_assert_uint_eq(f.tags[2].nvalues, 3);
	ck_assert_uint_eq(f.tags[2].lens[1], 0);
	ck_assert_str_eq(f.tags[2].values[2], "\303\251");
	ck_assert_uint_eq(f.tags[2].lens[2], 2);
	ck_assert_int_eq(f.tags[3].name, 'T');
	ck_assert_int_eq(f.since, -5);
	ck_assert_int_eq(f.until, 1700000000);
	ck_assert(f.has_limit);
	ck_assert_uint_eq(f.limit, 20);
	ck_assert_str_eq(f.search, "best nostr");
	filter_free(&f);
	ck_assert(is_pristine(&f));
	filter_free(&f);
	filter_free(NULL);
}
END_TEST

START_TEST(test_parse_ignores_unknown)
{
	struct filter f;

	parse_ok("{\"foo\":{},\"#xy\":[1],\"#\":1,\"#1\":[2],\"##\":3,\"#e1\":\"x\",\"IDS\":5,"
		 "\"Kinds\":\"1\",\"\":null,\"#\\u00e9\":[]}",
		 NULL, &f);
	ck_assert(is_pristine(&f));
	filter_free(&f);
}
END_TEST

static const struct fcase {
	const char *text;
	int rc;
	const char *reason; /* expected prefix */
} reject_cases[] = {
	{ "[]", ERR_INVAL, "invalid: filter must be a JSON object" },
	{ "\"x\"", ERR_INVAL, "invalid: filter must be a JSON object" },
	{ "{\"ids\":\"" HEX_A "\"}", ERR_INVAL, "invalid: ids must be an array" },
	{ "{\"ids\":[\"aaaa\"]}", ERR_INVAL, "invalid: ids must be 64-character lowercase hex" },
	{ "{\"ids\":[\"" HEX_A "a\"]}", ERR_INVAL, "invalid: ids must be 64-character lowercase hex" },
	{ "{\"ids\":[\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"]}", ERR_INVAL,
	  "invalid: ids must be 64-character lowercase hex" },
	{ "{\"ids\":[\"" HEX_A "\",1]}", ERR_INVAL, "invalid: ids must be 64-character lowercase hex" },
	{ "{\"authors\":[\"" HEX_A "\",\"zz\"]}", ERR_INVAL,
	  "invalid: authors must be 64-character lowercase hex" },
	{ "{\"authors\":{}}", ERR_INVAL, "invalid: authors must be an array" },
	{ "{\"kinds\":\"1\"}", ERR_INVAL, "invalid: kinds must be an array" },
	{ "{\"kinds\":1}", ERR_INVAL, "invalid: kinds must be an array" },
	{ "{\"kinds\":[\"1\"]}", ERR_INVAL, "invalid: kinds must be integers 0-65535" },
	{ "{\"kinds\":[-1]}", ERR_INVAL, "invalid: kinds must be integers 0-65535" },
	{ "{\"kinds\":[65536]}", ERR_INVAL, "invalid: kinds must be integers 0-65535" },
	{ "{\"kinds\":[1.5]}", ERR_INVAL, "invalid: kinds must be integers 0-65535" },
	{ "{\"kinds\":[null]}", ERR_INVAL, "invalid: kinds must be integers 0-65535" },
	{ "{\"#e\":[\"abc\"]}", ERR_INVAL, "invalid: #e values must be 64-character lowercase hex" },
	{ "{\"#p\":[\"" HEX_A "\",\"" PK "0\"]}", ERR_INVAL,
	  "invalid: #p values must be 64-character lowercase hex" },
	{ "{\"#e\":[\"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB\"]}", ERR_INVAL,
	  "invalid: #e values must be 64-character lowercase hex" },
	{ "{\"#t\":\"x\"}", ERR_INVAL, "invalid: #t must be an array" },
	{ "{\"#t\":[1]}", ERR_INVAL, "invalid: #t must be an array of strings" },
	{ "{\"#t\":[\"a\",[\"b\"]]}", ERR_INVAL, "invalid: #t must be an array of strings" },
	{ "{\"since\":1.5}", ERR_INVAL, "invalid: since must be an integer" },
	{ "{\"since\":\"1\"}", ERR_INVAL, "invalid: since must be an integer" },
	{ "{\"until\":null}", ERR_INVAL, "invalid: until must be an integer" },
	{ "{\"until\":[1]}", ERR_INVAL, "invalid: until must be an integer" },
	{ "{\"limit\":-1}", ERR_INVAL, "invalid: limit must be a non-negative integer" },
	{ "{\"limit\":2.5}", ERR_INVAL, "invalid: limit must be a non-negative integer" },
	{ "{\"limit\":\"10\"}", ERR_INVAL, "invalid: limit must be a non-negative integer" },
	{ "{\"search\":1}", ERR_INVAL, "invalid: search must be a string" },
	{ "{\"search\":null}", ERR_INVAL, "invalid: search must be a string" },
	{ "{\"kinds\":[1],\"kinds\":[2]}", ERR_INVAL, "invalid: duplicate field kinds" },
	{ "{\"#t\":[\"a\"],\"#t\":[\"b\"]}", ERR_INVAL, "invalid: duplicate field #t" },
	{ "{\"limit\":1,\"limit\":1}", ERR_INVAL, "invalid: duplicate field limit" },
	/* Failures after other fields were filled: all of it is released. */
	{ "{\"ids\":[\"" HEX_A "\"],\"authors\":[\"" HEX_B "\"],\"kinds\":[1],\"#t\":[\"a\"],"
	  "\"#u\":[\"b\"],\"search\":\"s\",\"since\":\"x\"}",
	  ERR_INVAL, "invalid: since must be an integer" },
	{ "{\"#a\":[\"a\",\"b\"],\"#b\":[\"c\",2]}", ERR_INVAL, "invalid: #b must be an array of strings" },
};

START_TEST(test_parse_rejections)
{
	const struct fcase *c = &reject_cases[_i];
	struct filter f;
	char reason[256];
	int rc = parse_filter(c->text, NULL, &f, reason, sizeof(reason));

	ck_assert_msg(rc == c->rc, "case %d (%s): rc %d", _i, c->text, rc);
	ck_assert_msg(strncmp(reason, c->reason, strlen(c->reason)) == 0,
		      "case %d: reason \"%s\", want \"%s\"", _i, reason, c->reason);
	ck_assert(is_pristine(&f));
}
END_TEST

START_TEST(test_reason_buffer)
{
	struct filter f;
	char small[8];

	ck_assert_int_eq(parse_filter("{\"kinds\":1}", NULL, &f, NULL, 0), ERR_INVAL);
	ck_assert_int_eq(parse_filter("{\"kinds\":1}", NULL, &f, small, sizeof(small)), ERR_INVAL);
	ck_assert_str_eq(small, "invalid");
	ck_assert_int_eq(filter_parse(NULL, NULL, &f, small, sizeof(small)), ERR_INVAL);
}
END_TEST

START_TEST(test_limit_clamp)
{
	struct filter_limits lim = { .max_limit = 500 };
	struct filter f;

	parse_ok("{\"limit\":1000}", &lim, &f);
	ck_assert(f.has_limit);
	ck_assert_uint_eq(f.limit, 500);
	filter_free(&f);
	parse_ok("{\"limit\":500}", &lim, &f);
	ck_assert_uint_eq(f.limit, 500);
	filter_free(&f);
	parse_ok("{\"limit\":499}", &lim, &f);
	ck_assert_uint_eq(f.limit, 499);
	filter_free(&f);
	parse_ok("{\"limit\":0}", &lim, &f);
	ck_assert(f.has_limit);
	ck_assert_uint_eq(f.limit, 0);
	ck_assert(!filter_is_empty(&f)); /* limit 0 still gets live events */
	filter_free(&f);
	parse_ok("{\"limit\":1e12}", NULL, &f);
	ck_assert_uint_eq(f.limit, UINT32_MAX);
	filter_free(&f);
	parse_ok("{\"limit\":1e300}", &lim, &f);
	ck_assert_uint_eq(f.limit, 500);
	filter_free(&f);
}
END_TEST

START_TEST(test_time_extremes)
{
	struct filter f;

	parse_ok("{\"since\":-1e30,\"until\":1e30}", NULL, &f);
	ck_assert_int_eq(f.since, INT64_MIN);
	ck_assert_int_eq(f.until, INT64_MAX);
	filter_free(&f);
	parse_ok("{\"since\":0,\"until\":0}", NULL, &f);
	ck_assert_int_eq(f.since, 0);
	ck_assert_int_eq(f.until, 0);
	ck_assert(!filter_is_empty(&f));
	filter_free(&f);
}
END_TEST

START_TEST(test_max_values)
{
	static const char *const fields[] = { "ids", "authors", "#e", "#t" };
	struct filter_limits lim = { .max_values = 3 };
	struct filter f;
	char text[512], reason[128], want[128];

	for (size_t i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "{\"%s\":[\"" HEX_A "\",\"" HEX_A "\",\"" HEX_B "\"]}",
			 fields[i]);
		parse_ok(text, &lim, &f);
		filter_free(&f);
		snprintf(text, sizeof(text),
			 "{\"%s\":[\"" HEX_A "\",\"" HEX_A "\",\"" HEX_B "\",\"" HEX_C "\"]}", fields[i]);
		ck_assert_int_eq(parse_filter(text, &lim, &f, reason, sizeof(reason)), ERR_TOOBIG);
		snprintf(want, sizeof(want), "invalid: too many values in %s (max 3)", fields[i]);
		ck_assert_str_eq(reason, want);
		ck_assert(is_pristine(&f));
	}
	parse_ok("{\"kinds\":[1,1,1]}", &lim, &f);
	filter_free(&f);
	ck_assert_int_eq(parse_filter("{\"kinds\":[1,2,3,4]}", &lim, &f, reason, sizeof(reason)),
			 ERR_TOOBIG);
	ck_assert_str_eq(reason, "invalid: too many values in kinds (max 3)");
}
END_TEST

START_TEST(test_match_time_inclusive)
{
	ck_assert(matches7("{\"since\":1700000500}"));
	ck_assert(!matches7("{\"since\":1700000501}"));
	ck_assert(matches7("{\"until\":1700000500}"));
	ck_assert(!matches7("{\"until\":1700000499}"));
	ck_assert(matches7("{\"since\":1700000500,\"until\":1700000500}"));
	ck_assert(!matches7("{\"since\":1700000501,\"until\":1700000500}"));
	ck_assert(matches7("{\"since\":-1}"));
}
END_TEST

START_TEST(test_match_lists)
{
	ck_assert(matches7("{\"kinds\":[1,7]}"));
	ck_assert(!matches7("{\"kinds\":[1,6,8]}"));
	ck_assert(matches7("{\"authors\":[\"" HEX_A "\",\"" PK "\"]}"));
	ck_assert(!matches7("{\"authors\":[\"" HEX_A "\"]}"));
	ck_assert(matches7("{\"ids\":[\"" ID7 "\"]}"));
	ck_assert(!matches7("{\"ids\":[\"" HEX_B "\"]}"));
	/* An id is not an author and an author is not an id. */
	ck_assert(!matches7("{\"ids\":[\"" PK "\"]}"));
	ck_assert(!matches7("{\"authors\":[\"" ID7 "\"]}"));
	/* Fields are AND'ed. */
	ck_assert(matches7("{\"kinds\":[7],\"authors\":[\"" PK "\"],\"ids\":[\"" ID7 "\"],"
			   "\"#t\":[\"Nostr\"],\"since\":1,\"until\":1700000500}"));
	ck_assert(!matches7("{\"kinds\":[7],\"authors\":[\"" HEX_A "\"]}"));
	ck_assert(!matches7("{\"kinds\":[7],\"#t\":[\"nope\"]}"));
	ck_assert(!matches7("{\"kinds\":[7],\"until\":5}"));
	/* limit has no effect on matching, unknown fields neither. */
	ck_assert(matches7("{\"limit\":0,\"foo\":[1]}"));
}
END_TEST

START_TEST(test_match_tags)
{
	ck_assert(matches7("{\"#t\":[\"first\"]}"));
	ck_assert(matches7("{\"#t\":[\"Nostr\"]}"));
	ck_assert(matches7("{\"#t\":[\"zzz\",\"Nostr\"]}"));
	/* Only the first value of a tag is indexed. */
	ck_assert(!matches7("{\"#t\":[\"second\"]}"));
	ck_assert(!matches7("{\"#e\":[\"" HEX_B "\"]}"));
	/* Case-sensitive, both in the name and in the value. */
	ck_assert(!matches7("{\"#t\":[\"nostr\"]}"));
	ck_assert(!matches7("{\"#T\":[\"Nostr\"]}"));
	/* Exact bytes with lengths: no prefixes. */
	ck_assert(!matches7("{\"#t\":[\"firs\"]}"));
	ck_assert(!matches7("{\"#t\":[\"first \"]}"));
	ck_assert(!matches7("{\"#t\":[\"\"]}"));
	ck_assert(matches7("{\"#r\":[\"\"]}"));
	ck_assert(matches7("{\"#e\":[\"" HEX_A "\"],\"#p\":[\"" HEX_B "\"]}"));
	ck_assert(!matches7("{\"#e\":[\"" HEX_A "\"],\"#p\":[\"" HEX_A "\"]}"));
	/* ["x"] has no value; multi-letter "title" is not indexed. */
	ck_assert(!matches7("{\"#x\":[\"\"]}"));
	ck_assert(!matches7("{\"#d\":[\"\"]}"));
	/* An ignored "#title" key does not constrain anything. */
	ck_assert(matches7("{\"#title\":[\"other\"]}"));
}
END_TEST

START_TEST(test_match_empty_lists)
{
	static const char *const texts[] = {
		"{\"ids\":[]}", "{\"authors\":[]}", "{\"kinds\":[]}", "{\"#t\":[]}",
		"{\"kinds\":[7],\"#p\":[]}", "{\"since\":10,\"until\":9}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct filter f;

		ck_assert_msg(!matches7(texts[i]), "%s", texts[i]);
		parse_ok(texts[i], NULL, &f);
		ck_assert_msg(filter_is_empty(&f), "%s", texts[i]);
		filter_free(&f);
	}
}
END_TEST

/* NIP-50 on live events: words, as the index matches them (event7's
 * content "+" has none, so a query of "+" matches nothing, live or
 * stored), extensions ignored, an empty query constrains nothing. */
START_TEST(test_match_search)
{
	ck_assert(!matches7("{\"search\":\"+\"}"));
	ck_assert(matches7("{\"search\":\"\"}"));
	ck_assert(matches7("{\"search\":\"include:spam\"}"));
	ck_assert(!matches7("{\"search\":\"  +  language:en \"}"));
	ck_assert(!matches7("{\"search\":\"nostr\"}"));
	ck_assert(!matches7("{\"search\":\"+ nostr\"}"));
	ck_assert(!matches7("{\"kinds\":[1],\"search\":\"+\"}"));
}
END_TEST

START_TEST(test_copy)
{
	static const char text[] = "{\"ids\":[\"" ID7 "\"],\"authors\":[\"" PK "\"],\"kinds\":[7],"
				   "\"#t\":[\"Nostr\",\"\"],\"#p\":[\"" HEX_B "\"],\"#q\":[],"
				   "\"since\":3,\"until\":1700000500,\"limit\":9}";
	struct filter a, b;
	struct event ev;

	parse_ok(text, NULL, &a);
	ck_assert_int_eq(filter_copy(&b, &a), 0);
	ck_assert_ptr_ne(b.ids, a.ids);
	ck_assert_ptr_ne(b.tags, a.tags);
	ck_assert_ptr_ne(b.tags[0].values[0], a.tags[0].values[0]);
	filter_free(&a);
	ck_assert_uint_eq(b.ntags, 3);
	ck_assert_uint_eq(b.tags[2].nvalues, 0);
	ck_assert_uint_eq(b.limit, 9);
	ck_assert_int_eq(b.since, 3);
	load_event7(&ev);
	/* #q is empty, so nothing matches; drop it and everything else holds. */
	ck_assert(!filter_matches(&b, &ev));
	b.ntags = 2;
	ck_assert(filter_matches(&b, &ev));
	b.ntags = 3;
	filter_free(&b);
	event_free(&ev);
	/* Copies of a pristine filter and of a search filter. */
	filter_init(&a);
	ck_assert_int_eq(filter_copy(&b, &a), 0);
	ck_assert(is_pristine(&b));
	filter_free(&b);
	parse_ok("{\"search\":\"q\"}", NULL, &a);
	ck_assert_int_eq(filter_copy(&b, &a), 0);
	ck_assert_str_eq(b.search, "q");
	ck_assert_ptr_ne(b.search, a.search);
	filter_free(&a);
	filter_free(&b);
}
END_TEST

/*
 * Differential test.  Random events (built with event_build, the tag index
 * being the first value of each single-letter tag) and random filters from
 * small domains, so that matches are frequent; the reference evaluates the
 * cJSON filter directly against the event's fields.
 */
static uint32_t rng_state = 0x9e3779b9u;

static uint32_t rng(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state % n;
}

static const char *const hexes[] = { HEX_A, HEX_B, HEX_C };
static const char *const words[] = { "a", "b", "A", "" };
static const char letters[] = { 't', 'T', 'p' };
static const uint32_t kinds[] = { 0, 1, 7, 30023 };

struct rand_event {
	int id, pubkey;
	int64_t created_at;
	uint32_t kind;
	int ntags;
	char names[4];
	const char *values[4]; /* NULL for a tag without a value */
};

static const char *rand_value(char name)
{
	return name == 'p' ? hexes[rng(3)] : words[rng(4)];
}

static void rand_event(struct rand_event *re)
{
	re->id = (int)rng(3);
	re->pubkey = (int)rng(3);
	re->created_at = rng(10);
	re->kind = kinds[rng(4)];
	re->ntags = (int)rng(5);
	for (int i = 0; i < re->ntags; i++) {
		re->names[i] = letters[rng(3)];
		re->values[i] = rng(5) ? rand_value(re->names[i]) : NULL;
	}
}

static void build_event(const struct rand_event *re, struct event *ev)
{
	struct event_tag tags[4];
	uint8_t id[32], pk[32], sig[64] = { 0 };
	uint32_t n = 0;

	hex_decode(hexes[re->id], 64, id, 32);
	hex_decode(hexes[re->pubkey], 64, pk, 32);
	for (int i = 0; i < re->ntags; i++) {
		if (!re->values[i])
			continue;
		tags[n].name = re->names[i];
		tags[n].value = re->values[i];
		tags[n].value_len = (uint32_t)strlen(re->values[i]);
		n++;
	}
	ck_assert_int_eq(event_build(ev, id, pk, sig, re->created_at, re->kind, tags, n, "{}", 2), 0);
}

static cJSON *rand_list(int kind_list, char tag)
{
	cJSON *a = cJSON_CreateArray();
	int n = (int)rng(4);

	for (int i = 0; i < n; i++) {
		if (kind_list)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(kinds[rng(4)]));
		else
			cJSON_AddItemToArray(a, cJSON_CreateString(tag ? rand_value(tag) : hexes[rng(3)]));
	}
	return a;
}

static cJSON *rand_filter(void)
{
	cJSON *f = cJSON_CreateObject();

	if (!rng(3))
		cJSON_AddItemToObject(f, "ids", rand_list(0, 0));
	if (!rng(3))
		cJSON_AddItemToObject(f, "authors", rand_list(0, 0));
	if (!rng(3))
		cJSON_AddItemToObject(f, "kinds", rand_list(1, 0));
	if (!rng(4))
		cJSON_AddNumberToObject(f, "since", rng(10));
	if (!rng(4))
		cJSON_AddNumberToObject(f, "until", rng(10));
	if (!rng(3))
		cJSON_AddItemToObject(f, "#t", rand_list(0, 't'));
	if (!rng(4))
		cJSON_AddItemToObject(f, "#T", rand_list(0, 'T'));
	if (!rng(4))
		cJSON_AddItemToObject(f, "#p", rand_list(0, 'p'));
	return f;
}

static bool ref_any_string(const cJSON *list, const char *s)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list)
		if (strcmp(el->valuestring, s) == 0)
			return true;
	return false;
}

static bool ref_tag(const cJSON *list, char name, const struct rand_event *re)
{
	for (int i = 0; i < re->ntags; i++)
		if (re->names[i] == name && re->values[i] && ref_any_string(list, re->values[i]))
			return true;
	return false;
}

static bool ref_field(const cJSON *item, const struct rand_event *re)
{
	const char *k = item->string;
	const cJSON *el;

	if (strcmp(k, "ids") == 0)
		return ref_any_string(item, hexes[re->id]);
	if (strcmp(k, "authors") == 0)
		return ref_any_string(item, hexes[re->pubkey]);
	if (strcmp(k, "since") == 0)
		return re->created_at >= (int64_t)item->valuedouble;
	if (strcmp(k, "until") == 0)
		return re->created_at <= (int64_t)item->valuedouble;
	if (k[0] == '#')
		return ref_tag(item, k[1], re);
	cJSON_ArrayForEach(el, item) /* kinds */
		if ((uint32_t)el->valuedouble == re->kind)
			return true;
	return false;
}

static bool ref_matches(const cJSON *filter, const struct rand_event *re)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, filter)
		if (!ref_field(item, re))
			return false;
	return true;
}

START_TEST(test_differential)
{
	int hits = 0;

	for (int round = 0; round < 400; round++) {
		cJSON *json = rand_filter();
		struct filter f, copy;
		char reason[128];

		ck_assert_int_eq(filter_parse(json, NULL, &f, reason, sizeof(reason)), 0);
		ck_assert_int_eq(filter_copy(&copy, &f), 0);
		for (int e = 0; e < 25; e++) {
			struct rand_event re;
			struct event ev;
			bool want, got;

			rand_event(&re);
			build_event(&re, &ev);
			want = ref_matches(json, &re);
			got = filter_matches(&f, &ev);
			ck_assert_msg(want == got, "round %d: %s", round, cJSON_PrintUnformatted(json));
			ck_assert(filter_matches(&copy, &ev) == got);
			if (filter_is_empty(&f))
				ck_assert(!got);
			hits += got;
			event_free(&ev);
		}
		filter_free(&f);
		filter_free(&copy);
		cJSON_Delete(json);
	}
	/* The domains are small enough that both outcomes are common. */
	ck_assert_int_gt(hits, 1000);
	ck_assert_int_lt(hits, 9000);
}
END_TEST

/* A U+0000 in a #t value, read through json_parse() on both sides, matches
 * exactly the same tag value: not the text before it, not a longer one. */
START_TEST(test_match_tag_nul)
{
	static const uint8_t zero[64];
	const struct event_tag tags[] = { { 't', 4, "a\xc0\x80" "b" }, { 'u', 2, "\xc0\x80" } };
	static const char *const hits[] = {
		"{\"#t\":[\"a\\u0000b\"]}",
		"{\"#t\":[\"a\",\"a\\u0000b\"]}",
		"{\"#u\":[\"\\u0000\"]}",
	};
	static const char *const misses[] = {
		"{\"#t\":[\"a\"]}",	  "{\"#t\":[\"a\\u0000\"]}",    "{\"#t\":[\"a\\u0000bc\"]}",
		"{\"#t\":[\"ab\"]}", "{\"#t\":[\"a\\\\u0000b\"]}", "{\"#u\":[\"\"]}",
	};
	struct event ev;
	struct filter f;

	ck_assert_int_eq(event_build(&ev, zero, zero, zero, 1, 1, tags, 2, "{}", 2), 0);
	for (size_t i = 0; i < sizeof(hits) / sizeof(hits[0]); i++) {
		parse_ok(hits[i], NULL, &f);
		ck_assert_msg(filter_matches(&f, &ev), "%s", hits[i]);
		filter_free(&f);
	}
	for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++) {
		parse_ok(misses[i], NULL, &f);
		ck_assert_msg(!filter_matches(&f, &ev), "%s", misses[i]);
		filter_free(&f);
	}
	event_free(&ev);
}
END_TEST

static Suite *filter_suite(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_parse_empty);
	tcase_add_test(tc, test_parse_all_fields);
	tcase_add_test(tc, test_parse_ignores_unknown);
	tcase_add_loop_test(tc, test_parse_rejections, 0,
			    (int)(sizeof(reject_cases) / sizeof(reject_cases[0])));
	tcase_add_test(tc, test_reason_buffer);
	tcase_add_test(tc, test_limit_clamp);
	tcase_add_test(tc, test_time_extremes);
	tcase_add_test(tc, test_max_values);
	suite_add_tcase(s, tc);
	tc = tcase_create("match");
	tcase_add_test(tc, test_match_time_inclusive);
	tcase_add_test(tc, test_match_lists);
	tcase_add_test(tc, test_match_tags);
	tcase_add_test(tc, test_match_tag_nul);
	tcase_add_test(tc, test_match_empty_lists);
	tcase_add_test(tc, test_match_search);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_differential);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(filter_suite());
}
