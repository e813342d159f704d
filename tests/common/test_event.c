/*
 * test_event.c - checks common/event.c and common/event_parse.c: canonical
 * serialization, id computation, every rejection, limits, the tag index,
 * and the small helpers (event_newer, event_class_of, event_build).
 *
 * The "reference vectors" below were produced with nostr-tools 2.x (npm),
 * independent of this code: finalizeEvent() with the fixed secret key
 * 0x0102...1f20 on the templates listed next to each vector, and the result
 * written with JSON.stringify({id, pubkey, created_at, kind, tags, content,
 * sig}).  Their contents use no control characters other than \b \t \n \f \r,
 * where JSON.stringify and NIP-01 agree.  The signatures are randomized
 * (BIP-340 aux_rand) and so differ between runs of the generator; any one run
 * is valid.  Cases that nostr-tools cannot serialize the NIP-01 way (raw
 * control characters) hash a preimage written out by hand in the test, as
 * do those of the JSON.stringify() form that the relay also accepts.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/sha.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/hex.h"
#include "../../common/json.h"
#include "../support/suite.h"

#define PK "84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0"
#define SIG0                                                                                       \
	"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" \
	"000000000000000000000000000000000000000"

/* Reference vectors (see the file comment); each is already canonical. */
static const char *const vectors[] = {
	/* 0: kind 1, created_at 1700000000, no tags, content "hello nostr" */
	"{\"id\":\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":1700000000,\"kind\":1,"
	"\"tags\":[],"
	"\"content\":\"hello nostr\","
	"\"sig\":\"5ed9ef79ee5778a37c9b33870d516fa9b9801b5578907c688653506e9315d45674c466e816e0ddc0bf5a2796fc60cdf77dfbde7b2d72c90d6e6173f6dbf387f6\"}",
	/* 1: all seven escapes, raw /, é, an emoji and DEL */
	"{\"id\":\"38423bb5853615de3b2bbff967348ac8f46a50a662301bdce513db4dcde7979f\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":1700000001,\"kind\":1,"
	"\"tags\":[[\"t\",\"esc\"]],"
	"\"content\":\"q\\\"uote b\\\\ack nl\\n cr\\r tab\\t bs\\b ff\\f slash/ e\303\251 emoji\360\237\230\200 del\177 end\","
	"\"sig\":\"2611a96c7543b111ad270e8e7204540f79a39e9909caa3bb3f941f5c1206250a868d7cd9255f6cf7772e8620658d6bfef4eaac0897e8e553f73631a22172939d\"}",
	/* 2: addressable, created_at 1, empty content, odd tags ([], ["x"], multi-letter) */
	"{\"id\":\"c12071936619f53a6f2f86a1f53d083e24ff36e93f32b930aeea0454c48ef82f\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":1,\"kind\":30023,"
	"\"tags\":[[\"d\",\"my-article\"],[\"e\",\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"wss://r.example/\",\"root\"],[\"p\",\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"],[\"title\",\"T\"],[\"x\"],[],[\"T\",\"Upper\"],[\"e\",\"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\"]],"
	"\"content\":\"\","
	"\"sig\":\"95a28142cad292c5e269cdab1956bdae68dcde917f413e134f5dbe29ad7aeceac93835cdc9f89890551173273eba0139589d2ff0214b991721c78a4e60f21777\"}",
	/* 3: kind 0 at created_at 0, content with quotes */
	"{\"id\":\"5d84e4a4661ec81a5a2418d1c491173e00a64a94f808680bae996dbc22d2bd0f\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":0,\"kind\":0,"
	"\"tags\":[],"
	"\"content\":\"{\\\"name\\\":\\\"alice\\\"}\","
	"\"sig\":\"06c756c5e82f6f6aabef6785ebde2adbe4062e5eb8393315763225ca1dafffc8a4b44c16ef7f513844bad397299b2519695d385bfed9b2a936dea45838574f3f\"}",
	/* 4: the largest kind and created_at (2^53 - 1), an empty tag value */
	"{\"id\":\"6aa8620499411e3e325891801e26f0d9f10fa29b8584f0b69f455aff50f92706\","
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","
	"\"created_at\":9007199254740991,\"kind\":65535,"
	"\"tags\":[[\"a\",\"\"]],"
	"\"content\":\"max\","
	"\"sig\":\"8e4cee06c2bd535476817e4cbc1c3ce07b9021ed003da85a5605205518d3cd2104bb642d897d96fc0ffb90152afd365d8d0ddc0693b4bc405524f288306c2bab\"}",
};

#define NVECTORS (sizeof(vectors) / sizeof(vectors[0]))

/* Vector 1 as a client may also send it: fields reordered, pretty-printed,
 * and \u0008, \/, \u00e9, a surrogate pair and \u007F instead of raw text
 * (made from the same nostr-tools event by string replacement). */
static const char vector1_escaped[] =
	"{\n"
	" \"sig\": \"2611a96c7543b111ad270e8e7204540f79a39e9909caa3bb3f941f5c1206250a868d7cd9255f6cf7772e8620658d6bfef4eaac0897e8e553f73631a22172939d\",\n"
	" \"content\": \"q\\\"uote b\\\\ack nl\\n cr\\r tab\\t bs\\u0008 ff\\f slash\\/ e\\u00e9 emoji\\ud83d\\ude00 del\\u007F end\",\n"
	" \"tags\": [\n"
	"  [\n"
	"   \"t\",\n"
	"   \"esc\"\n"
	"  ]\n"
	" ],\n"
	" \"kind\": 1,\n"
	" \"created_at\": 1700000001,\n"
	" \"pubkey\": \"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\",\n"
	" \"id\": \"38423bb5853615de3b2bbff967348ac8f46a50a662301bdce513db4dcde7979f\"\n"
	"}";

/* event_parse() on JSON text read as the relay reads it (json_parse());
 * the reason is kept for the caller. */
static int parse_text(const char *text, const struct event_limits *lim, struct event *ev,
		      char *reason, size_t reason_len)
{
	cJSON *obj = json_parse(text, strlen(text), true);
	int rc;

	ck_assert_msg(obj != NULL, "test JSON does not parse: %s", text);
	rc = event_parse(obj, lim, ev, reason, reason_len);
	cJSON_Delete(obj);
	return rc;
}

static void assert_parses_to(const char *text, const char *canonical)
{
	struct event ev;
	char reason[256];
	int rc = parse_text(text, NULL, &ev, reason, sizeof(reason));

	ck_assert_msg(rc == 0, "rc %d: %s", rc, reason);
	ck_assert_str_eq(reason, "");
	ck_assert_uint_eq(ev.json_len, strlen(canonical));
	ck_assert_mem_eq(ev.json, canonical, ev.json_len);
	ck_assert_int_eq(ev.json[ev.json_len], '\0');
	event_free(&ev);
}

/* Hex of SHA-256 over len bytes of pre, computed without our code. */
static void hash_hex(const char *pre, size_t len, char out[65])
{
	uint8_t h[32];

	SHA256((const unsigned char *)pre, len, h);
	hex_encode(h, 32, out);
}

/* Replaces the first "ID" in fmt with id (fmt has no other 'ID'). */
static char *with_id(const char *fmt, const char *id)
{
	const char *at = strstr(fmt, "ID");
	size_t n = strlen(fmt) + 64;
	char *out = malloc(n);

	ck_assert_ptr_nonnull(at);
	snprintf(out, n, "%.*s%s%s", (int)(at - fmt), fmt, id, at + 2);
	return out;
}

START_TEST(test_reference_vectors)
{
	for (size_t i = 0; i < NVECTORS; i++)
		assert_parses_to(vectors[i], vectors[i]);
}
END_TEST

START_TEST(test_reference_fields)
{
	struct event ev;
	char reason[128];
	uint8_t pk[32];

	ck_assert_int_eq(parse_text(vectors[4], NULL, &ev, reason, sizeof(reason)), 0);
	ck_assert_int_eq(hex_decode(PK, 64, pk, 32), 0);
	ck_assert_mem_eq(ev.pubkey, pk, 32);
	ck_assert_int_eq(ev.created_at, 9007199254740991LL);
	ck_assert_uint_eq(ev.kind, 65535);
	ck_assert_uint_eq(ev.ntags, 1);
	ck_assert_int_eq(ev.tags[0].name, 'a');
	ck_assert_uint_eq(ev.tags[0].value_len, 0);
	ck_assert_uint_eq(ev.sig[0], 0x8e);
	ck_assert_uint_eq(ev.sig[63], 0xab);
	ck_assert_uint_eq(ev.id[0], 0x6a);
	event_free(&ev);
}
END_TEST

/* The id is computed from decoded strings: any legal spelling of the same
 * event gives the same id and the same canonical JSON. */
START_TEST(test_escaped_input_same_event)
{
	assert_parses_to(vector1_escaped, vectors[1]);
}
END_TEST

/* Control characters other than the seven go out raw, in the hash and in
 * the stored JSON; \/ decodes to a raw '/'. */
START_TEST(test_raw_control_characters)
{
	static const char pre[] = "[0,\"" PK "\",5,1,[[\"c\",\"\001\"]],\"a\001b\037c\177d/e\"]";
	static const char in[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":5,\"kind\":1,"
				 "\"tags\":[[\"c\",\"\\u0001\"]],\"content\":\"a\\u0001b\\u001Fc\\u007fd\\/e\","
				 "\"sig\":\"" SIG0 "\"}";
	/* The hash covers the raw control characters; the JSON sent and stored
	 * escapes them (RFC 8259), which decodes to the same strings. */
	static const char canon[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":5,\"kind\":1,"
				    "\"tags\":[[\"c\",\"\\u0001\"]],\"content\":\"a\\u0001b\\u001fc\177d/e\","
				    "\"sig\":\"" SIG0 "\"}";
	char id[65];
	char *text, *expect;

	hash_hex(pre, sizeof(pre) - 1, id);
	text = with_id(in, id);
	expect = with_id(canon, id);
	assert_parses_to(text, expect);
	free(text);
	free(expect);
}
END_TEST

START_TEST(test_unicode_escape_vs_raw)
{
	static const char pre[] = "[0,\"" PK "\",7,1,[],\"caf\303\251 \360\237\230\200\"]";
	static const char raw[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":7,\"kind\":1,"
				  "\"tags\":[],\"content\":\"caf\303\251 \360\237\230\200\","
				  "\"sig\":\"" SIG0 "\"}";
	static const char esc[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":7,\"kind\":1,"
				  "\"tags\":[],\"content\":\"caf\\u00e9 \\uD83D\\uDE00\","
				  "\"sig\":\"" SIG0 "\"}";
	char id[65];
	char *a, *b;

	hash_hex(pre, sizeof(pre) - 1, id);
	a = with_id(raw, id);
	b = with_id(esc, id);
	assert_parses_to(a, a);
	assert_parses_to(b, a);
	free(a);
	free(b);
}
END_TEST

/* Appends `["t","<i>"]` tags to both the preimage and the input text. */
static void many_tags_text(int n, char **pre, char **in)
{
	size_t cap = (size_t)n * 24 + 1024;
	char *p = malloc(cap), *t = malloc(cap);
	size_t pl, tl;

	pl = (size_t)snprintf(p, cap, "[0,\"%s\",9,1,[", PK);
	tl = (size_t)snprintf(t, cap, "{ \"content\" : \"\", \"tags\" : [ ");
	for (int i = 0; i < n; i++) {
		pl += (size_t)snprintf(p + pl, cap - pl, "%s[\"t\",\"%d\"]", i ? "," : "", i);
		tl += (size_t)snprintf(t + tl, cap - tl, "%s [ \"t\" , \"%d\" ]", i ? " ," : "", i);
	}
	snprintf(p + pl, cap - pl, "],\"\"]");
	snprintf(t + tl, cap - tl,
		 " ], \"kind\": 1, \"created_at\": 9, \"pubkey\": \"%s\", \"sig\": \"%s\", "
		 "\"id\": \"ID\" }",
		 PK, SIG0);
	*pre = p;
	*in = t;
}

START_TEST(test_many_tags)
{
	struct event ev;
	char reason[128], id[65];
	char *pre, *in, *text;

	many_tags_text(2000, &pre, &in);
	hash_hex(pre, strlen(pre), id);
	text = with_id(in, id);
	ck_assert_int_eq(parse_text(text, NULL, &ev, reason, sizeof(reason)), 0);
	ck_assert_uint_eq(ev.ntags, 2000);
	ck_assert_int_eq(ev.tags[1999].name, 't');
	ck_assert_uint_eq(ev.tags[1999].value_len, 4);
	ck_assert_mem_eq(ev.tags[1999].value, "1999", 4);
	ck_assert_ptr_nonnull(strstr(ev.json, ",[\"t\",\"1999\"]],\"content\":\"\",\"sig\""));
	event_free(&ev);
	free(pre);
	free(in);
	free(text);
}
END_TEST

/* Only tags named by one ASCII letter with at least two elements are
 * indexed, with their first value, in tag order. */
START_TEST(test_tag_index)
{
	static const struct {
		char name;
		const char *value;
	} want[] = {
		{ 'd', "my-article" },
		{ 'e', "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
		{ 'p', "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" },
		{ 'T', "Upper" },
		{ 'e', "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc" },
	};
	struct event ev;
	char reason[128];
	uint32_t len;
	const char *v;

	ck_assert_int_eq(parse_text(vectors[2], NULL, &ev, reason, sizeof(reason)), 0);
	ck_assert_uint_eq(ev.ntags, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(ev.tags[i].name, want[i].name);
		ck_assert_uint_eq(ev.tags[i].value_len, strlen(want[i].value));
		ck_assert_mem_eq(ev.tags[i].value, want[i].value, ev.tags[i].value_len);
	}
	v = event_tag_value(&ev, 'd', &len);
	ck_assert_uint_eq(len, 10);
	ck_assert_mem_eq(v, "my-article", 10);
	v = event_tag_value(&ev, 'e', &len);
	ck_assert_mem_eq(v, want[1].value, 64);
	ck_assert_ptr_null(event_tag_value(&ev, 'x', &len));
	ck_assert_uint_eq(len, 0);
	ck_assert_ptr_null(event_tag_value(&ev, 't', &len));
	event_free(&ev);
}
END_TEST

START_TEST(test_no_tags_index_null)
{
	struct event ev;
	char reason[128];

	ck_assert_int_eq(parse_text(vectors[0], NULL, &ev, reason, sizeof(reason)), 0);
	ck_assert_uint_eq(ev.ntags, 0);
	ck_assert_ptr_null(ev.tags);
	event_free(&ev);
}
END_TEST

/* Builds vector 0 with one field's text replaced: field is the JSON key,
 * value the raw JSON that goes after it (NULL drops the field). */
static char *vector0_with(const char *field, const char *value)
{
	static const char *const keys[] = { "id", "pubkey", "created_at", "kind", "tags", "content", "sig" };
	static const char *const vals[] = {
		"\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\"",
		"\"" PK "\"",
		"1700000000",
		"1",
		"[]",
		"\"hello nostr\"",
		"\"5ed9ef79ee5778a37c9b33870d516fa9b9801b5578907c688653506e9315d45674c466e816e0ddc0bf5a2796fc60cdf77dfbde7b2d72c90d6e6173f6dbf387f6\"",
	};
	char *out = malloc(2048);
	size_t len = 0;

	len += (size_t)snprintf(out + len, 2048 - len, "{");
	for (size_t i = 0; i < 7; i++) {
		const char *v = strcmp(keys[i], field) == 0 ? value : vals[i];

		if (v)
			len += (size_t)snprintf(out + len, 2048 - len, "%s\"%s\":%s", len > 1 ? "," : "",
						keys[i], v);
	}
	snprintf(out + len, 2048 - len, "}");
	return out;
}

static const uint8_t id0[32] = {
	0x4a, 0x8d, 0x38, 0x69, 0xb3, 0xba, 0x49, 0xe7, 0x76, 0x65, 0x5d, 0xf0, 0x80, 0xc1, 0x40, 0x84,
	0x9c, 0x85, 0xab, 0x6a, 0x3b, 0x9e, 0x8c, 0x38, 0x64, 0x49, 0xd4, 0xa0, 0x3f, 0xcc, 0x01, 0xa1,
};

static const struct reject_case {
	const char *field;
	const char *value;
	const char *reason; /* a prefix of the expected reason */
} reject_cases[] = {
	{ "id", NULL, "invalid: missing field id" },
	{ "id", "\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a\"", "invalid: id must be 64 lowercase hex" },
	{ "id", "\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a10\"", "invalid: id must be 64 lowercase hex" },
	{ "id", "\"4A8D3869B3BA49E776655DF080C140849C85AB6A3B9E8C386449D4A03FCC01A1\"", "invalid: id must be 64 lowercase hex" },
	{ "id", "\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01ag\"", "invalid: id must be 64 lowercase hex" },
	{ "id", "\"\"", "invalid: id must be 64 lowercase hex" },
	{ "id", "42", "invalid: id must be 64 lowercase hex" },
	{ "id", "null", "invalid: id must be 64 lowercase hex" },
	{ "pubkey", NULL, "invalid: missing field pubkey" },
	{ "pubkey", "\"84BF7562262BBD6940085748F3BE6AFA52AE317155181ECE31B66351CCFFA4B0\"", "invalid: pubkey must be 64 lowercase hex" },
	{ "pubkey", "\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b\"", "invalid: pubkey must be 64 lowercase hex" },
	{ "pubkey", "[\"" PK "\"]", "invalid: pubkey must be 64 lowercase hex" },
	{ "sig", NULL, "invalid: missing field sig" },
	{ "sig", "\"" SIG0 "0\"", "invalid: sig must be 128 lowercase hex" },
	{ "sig", "\"" PK "\"", "invalid: sig must be 128 lowercase hex" },
	{ "sig", "\"5ED9EF79EE5778A37C9B33870D516FA9B9801B5578907C688653506E9315D45674C466E816E0DDC0BF5A2796FC60CDF77DFBDE7B2D72C90D6E6173F6DBF387F6\"", "invalid: sig must be 128 lowercase hex" },
	{ "created_at", NULL, "invalid: missing field created_at" },
	{ "created_at", "1700000000.5", "invalid: created_at must be" },
	{ "created_at", "-1", "invalid: created_at must be" },
	{ "created_at", "\"1700000000\"", "invalid: created_at must be" },
	{ "created_at", "9007199254740992", "invalid: created_at must be" },
	{ "created_at", "1e300", "invalid: created_at must be" },
	{ "created_at", "null", "invalid: created_at must be" },
	{ "kind", NULL, "invalid: missing field kind" },
	{ "kind", "-1", "invalid: kind must be an integer 0-65535" },
	{ "kind", "65536", "invalid: kind must be an integer 0-65535" },
	{ "kind", "1.5", "invalid: kind must be an integer 0-65535" },
	{ "kind", "\"1\"", "invalid: kind must be an integer 0-65535" },
	{ "kind", "true", "invalid: kind must be an integer 0-65535" },
	{ "tags", NULL, "invalid: missing field tags" },
	{ "tags", "{}", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "\"t\"", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "[\"t\"]", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "[[\"t\",1]]", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "[[\"t\",null]]", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "[[\"t\"],[[\"nested\"]]]", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "[[\"t\",{}]]", "invalid: tags must be an array of arrays of strings" },
	{ "tags", "null", "invalid: tags must be an array of arrays of strings" },
	{ "content", NULL, "invalid: missing field content" },
	{ "content", "1", "invalid: content must be a string" },
	{ "content", "null", "invalid: content must be a string" },
	{ "content", "[\"hello nostr\"]", "invalid: content must be a string" },
	{ "content", "\"hello nostr!\"", "invalid: id does not match the event hash" },
	{ "kind", "2", "invalid: id does not match the event hash" },
	{ "created_at", "1700000001", "invalid: id does not match the event hash" },
	{ "tags", "[[]]", "invalid: id does not match the event hash" },
};

#define NREJECT (sizeof(reject_cases) / sizeof(reject_cases[0]))

START_TEST(test_rejections)
{
	const struct reject_case *c = &reject_cases[_i];
	bool id_ok = strcmp(c->field, "id") != 0;
	struct event ev;
	char reason[256];
	char *text = vector0_with(c->field, c->value);
	int rc = parse_text(text, NULL, &ev, reason, sizeof(reason));

	ck_assert_msg(rc == ERR_INVAL, "case %d (%s): rc %d", _i, text, rc);
	ck_assert_msg(strncmp(reason, c->reason, strlen(c->reason)) == 0,
		      "case %d: reason \"%s\", want \"%s\"", _i, reason, c->reason);
	/* The id still comes back whenever it was well-formed. */
	if (id_ok)
		ck_assert_mem_eq(ev.id, id0, 32);
	else
		ck_assert_mem_eq(ev.id, (uint8_t[32]){ 0 }, 32);
	ck_assert_ptr_null(ev.storage);
	ck_assert_ptr_null(ev.json);
	ck_assert_uint_eq(ev.ntags, 0);
	free(text);
}
END_TEST

START_TEST(test_reject_structure)
{
	static const struct {
		const char *text;
		const char *reason;
	} cases[] = {
		{ "[]", "invalid: event must be a JSON object" },
		{ "\"event\"", "invalid: event must be a JSON object" },
		{ "{}", "invalid: missing field id" },
		{ "{\"id\":\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\","
		  "\"pubkey\":\"" PK "\",\"created_at\":1700000000,\"kind\":1,\"tags\":[],"
		  "\"content\":\"hello nostr\",\"sig\":\"" SIG0 "\",\"extra\":1}",
		  "invalid: unexpected field" },
		{ "{\"id\":\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\","
		  "\"pubkey\":\"" PK "\",\"created_at\":1700000000,\"kind\":1,\"kind\":1,\"tags\":[],"
		  "\"content\":\"hello nostr\",\"sig\":\"" SIG0 "\"}",
		  "invalid: duplicate field kind" },
		{ "{\"ID\":\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\","
		  "\"pubkey\":\"" PK "\",\"created_at\":1700000000,\"kind\":1,\"tags\":[],"
		  "\"content\":\"hello nostr\",\"sig\":\"" SIG0 "\"}",
		  "invalid: unexpected field" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct event ev;
		char reason[256];

		ck_assert_int_eq(parse_text(cases[i].text, NULL, &ev, reason, sizeof(reason)), ERR_INVAL);
		ck_assert_msg(strncmp(reason, cases[i].reason, strlen(cases[i].reason)) == 0,
			      "case %zu: reason \"%s\"", i, reason);
		ck_assert_ptr_null(ev.storage);
	}
	/* A NULL object is not an object either. */
	{
		struct event ev;
		char reason[64];

		ck_assert_int_eq(event_parse(NULL, NULL, &ev, reason, sizeof(reason)), ERR_INVAL);
	}
}
END_TEST

/* A reason buffer of size 0 (or a short one) is never overrun. */
START_TEST(test_reason_buffer)
{
	struct event ev;
	char small[8];
	cJSON *obj = cJSON_Parse("{}");

	ck_assert_int_eq(event_parse(obj, NULL, &ev, NULL, 0), ERR_INVAL);
	ck_assert_int_eq(event_parse(obj, NULL, &ev, small, sizeof(small)), ERR_INVAL);
	ck_assert_str_eq(small, "invalid");
	cJSON_Delete(obj);
}
END_TEST

/* The event of test_nul_* with id over the preimage pre (pre_len bytes). */
static char *nul_event(const char *pre, size_t pre_len)
{
	static const char in[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":5,\"kind\":1,"
				 "\"tags\":[[\"t\",\"x\\u0000y\"],[\"c\",\"\\u0001\"]],"
				 "\"content\":\"a\\u0000b\",\"sig\":\"" SIG0 "\"}";
	char id[65];

	hash_hex(pre, pre_len, id);
	return with_id(in, id);
}

/* U+0000 is kept whole: the id hashes it, the stored JSON has \u0000, and
 * the tag index and content hold it as C0 80 (json.h).  Either preimage
 * form is accepted: NIP-01's with the control characters raw, and
 * JSON.stringify()'s with them as \u00XX. */
START_TEST(test_nul_either_form)
{
	static const char raw[] = "[0,\"" PK "\",5,1,[[\"t\",\"x\000y\"],[\"c\",\"\001\"]],\"a\000b\"]";
	static const char esc[] = "[0,\"" PK "\",5,1,[[\"t\",\"x\\u0000y\"],[\"c\",\"\\u0001\"]],"
				  "\"a\\u0000b\"]";
	const char *pres[] = { raw, esc };
	const size_t lens[] = { sizeof(raw) - 1, sizeof(esc) - 1 };

	for (int i = 0; i < 2; i++) {
		char *text = nul_event(pres[i], lens[i]);
		struct event ev;
		char reason[128];

		ck_assert_msg(parse_text(text, NULL, &ev, reason, sizeof(reason)) == 0, "form %d: %s",
			      i, reason);
		ck_assert_str_eq(ev.json, text); /* already canonical */
		ck_assert_uint_eq(ev.content_len, 4);
		ck_assert_mem_eq(ev.content, "a\xc0\x80" "b", 4);
		ck_assert_uint_eq(ev.ntags, 2);
		ck_assert_uint_eq(ev.tags[0].value_len, 4);
		ck_assert_mem_eq(ev.tags[0].value, "x\xc0\x80y", 4);
		event_free(&ev);
		free(text);
	}
}
END_TEST

/* An id over the text cut at the NUL, or over a mix of the two forms, is
 * no id of the event. */
START_TEST(test_nul_wrong_preimage)
{
	static const char cut[] = "[0,\"" PK "\",5,1,[[\"t\",\"x\"],[\"c\",\"\001\"]],\"a\"]";
	static const char mixed[] = "[0,\"" PK "\",5,1,[[\"t\",\"x\\u0000y\"],[\"c\",\"\001\"]],"
				    "\"a\\u0000b\"]";
	static const char empty[] = "[0,\"" PK "\",5,1,[[\"t\",\"xy\"],[\"c\",\"\"]],\"ab\"]";
	const char *pres[] = { cut, mixed, empty };
	const size_t lens[] = { sizeof(cut) - 1, sizeof(mixed) - 1, sizeof(empty) - 1 };

	for (int i = 0; i < 3; i++) {
		char *text = nul_event(pres[i], lens[i]);
		struct event ev;
		char reason[128];

		ck_assert_int_eq(parse_text(text, NULL, &ev, reason, sizeof(reason)), ERR_INVAL);
		ck_assert_str_eq(reason, "invalid: id does not match the event hash");
		free(text);
	}
}
END_TEST

/* Without a control character the two forms are one; a JSON.stringify()
 * form of the seven escapes is the NIP-01 form, so the id must match it. */
START_TEST(test_only_seven_escapes_one_form)
{
	static const char pre[] = "[0,\"" PK "\",5,1,[],\"a\\nb\"]";
	static const char in[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":5,\"kind\":1,"
				 "\"tags\":[],\"content\":\"a\\u000ab\",\"sig\":\"" SIG0 "\"}";
	static const char canon[] = "{\"id\":\"ID\",\"pubkey\":\"" PK "\",\"created_at\":5,\"kind\":1,"
				    "\"tags\":[],\"content\":\"a\\nb\",\"sig\":\"" SIG0 "\"}";
	char id[65];
	char *text, *expect;

	hash_hex(pre, sizeof(pre) - 1, id);
	text = with_id(in, id);
	expect = with_id(canon, id);
	assert_parses_to(text, expect);
	free(text);
	free(expect);
}
END_TEST

/* max_tag_value counts a U+0000 as the one byte it is. */
START_TEST(test_limit_tag_value_nul)
{
	struct event_limits lim = { .max_tag_value = 3 };
	static const char raw[] = "[0,\"" PK "\",5,1,[[\"t\",\"x\000y\"],[\"c\",\"\001\"]],\"a\000b\"]";
	char *text = nul_event(raw, sizeof(raw) - 1);
	struct event ev;
	char reason[128];

	ck_assert_msg(parse_text(text, &lim, &ev, reason, sizeof(reason)) == 0, "%s", reason);
	event_free(&ev);
	lim.max_tag_value = 2;
	ck_assert_int_eq(parse_text(text, &lim, &ev, reason, sizeof(reason)), ERR_TOOBIG);
	free(text);
}
END_TEST

static int parse_limited(const char *text, const struct event_limits *lim, char *reason)
{
	struct event ev;
	int rc = parse_text(text, lim, &ev, reason, 128);

	event_free(&ev);
	return rc;
}

START_TEST(test_limit_tags)
{
	struct event_limits lim = { .max_tags = 8 };
	char reason[128];

	ck_assert_int_eq(parse_limited(vectors[2], &lim, reason), 0);
	lim.max_tags = 7;
	ck_assert_int_eq(parse_limited(vectors[2], &lim, reason), ERR_TOOBIG);
	ck_assert_str_eq(reason, "invalid: too many tags (max 7)");
}
END_TEST

START_TEST(test_limit_tag_value)
{
	struct event_limits lim = { .max_tag_value = 64 };
	char reason[128];

	ck_assert_int_eq(parse_limited(vectors[2], &lim, reason), 0);
	lim.max_tag_value = 63;
	ck_assert_int_eq(parse_limited(vectors[2], &lim, reason), ERR_TOOBIG);
	ck_assert_str_eq(reason, "invalid: tag element too long (max 63 bytes)");
}
END_TEST

START_TEST(test_limit_content)
{
	/* Vector 1's decoded content is 63 bytes and 59 characters (é is 2
	 * bytes, the emoji 4): NIP-11's max_content_length counts characters. */
	struct event_limits lim = { .max_content = 59 };
	char reason[128];

	ck_assert_int_eq(parse_limited(vectors[1], &lim, reason), 0);
	ck_assert_int_eq(parse_limited(vector1_escaped, &lim, reason), 0);
	lim.max_content = 58;
	ck_assert_int_eq(parse_limited(vectors[1], &lim, reason), ERR_TOOBIG);
	ck_assert_str_eq(reason, "invalid: content too long (max 58 characters)");
	ck_assert_int_eq(parse_limited(vector1_escaped, &lim, reason), ERR_TOOBIG);
}
END_TEST

START_TEST(test_limit_time_window)
{
	/* Vector 0 was made at 1700000000. */
	struct event_limits lim = { .now = 1700000100, .max_past_seconds = 100 };
	char reason[128];

	ck_assert_int_eq(parse_limited(vectors[0], &lim, reason), 0);
	lim.max_past_seconds = 99;
	ck_assert_int_eq(parse_limited(vectors[0], &lim, reason), ERR_INVAL);
	ck_assert_str_eq(reason, "invalid: created_at too far in the past");
	lim = (struct event_limits){ .now = 1699999900, .max_future_seconds = 100 };
	ck_assert_int_eq(parse_limited(vectors[0], &lim, reason), 0);
	lim.max_future_seconds = 99;
	ck_assert_int_eq(parse_limited(vectors[0], &lim, reason), ERR_INVAL);
	ck_assert_str_eq(reason, "invalid: created_at too far in the future");
	/* A window applies only on its own side. */
	lim = (struct event_limits){ .now = 1800000000, .max_future_seconds = 1 };
	ck_assert_int_eq(parse_limited(vectors[0], &lim, reason), 0);
}
END_TEST

START_TEST(test_limits_zero_unlimited)
{
	struct event_limits lim = { 0 };
	char reason[128];

	for (size_t i = 0; i < NVECTORS; i++)
		ck_assert_int_eq(parse_limited(vectors[i], &lim, reason), 0);
}
END_TEST

START_TEST(test_event_newer)
{
	uint8_t lo[32] = { 0 }, hi[32] = { 0 };

	hi[31] = 1;
	ck_assert(event_newer(11, hi, 10, lo));
	ck_assert(!event_newer(10, lo, 11, hi));
	/* Same second: the lexically lower id wins. */
	ck_assert(event_newer(10, lo, 10, hi));
	ck_assert(!event_newer(10, hi, 10, lo));
	/* An event does not replace itself. */
	ck_assert(!event_newer(10, lo, 10, lo));
	lo[0] = 0x01;
	hi[0] = 0x00; /* first byte decides before the last */
	ck_assert(event_newer(10, hi, 10, lo));
}
END_TEST

START_TEST(test_event_class_of)
{
	static const struct {
		uint32_t kind;
		enum event_class cls;
	} cases[] = {
		{ 0, EVENT_REPLACEABLE },     { 1, EVENT_REGULAR },         { 2, EVENT_REGULAR },
		{ 3, EVENT_REPLACEABLE },     { 4, EVENT_REGULAR },         { 5, EVENT_REGULAR },
		{ 9999, EVENT_REGULAR },      { 10000, EVENT_REPLACEABLE }, { 19999, EVENT_REPLACEABLE },
		{ 20000, EVENT_EPHEMERAL },   { 29999, EVENT_EPHEMERAL },   { 30000, EVENT_ADDRESSABLE },
		{ 39999, EVENT_ADDRESSABLE }, { 40000, EVENT_REGULAR },     { 65535, EVENT_REGULAR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(event_class_of(cases[i].kind) == cases[i].cls, "kind %u", cases[i].kind);
}
END_TEST

START_TEST(test_event_build_copies)
{
	uint8_t id[32], pk[32], sig[64];
	char value[] = "v\0x";
	struct event_tag tags[2] = { { 'a', 3, value }, { 'B', 0, "" } };
	char json[] = "{}";
	struct event ev;

	memset(id, 1, 32);
	memset(pk, 2, 32);
	memset(sig, 3, 64);
	ck_assert_int_eq(event_build(&ev, id, pk, sig, 42, 7, tags, 2, json, 2), 0);
	value[0] = 'X';
	json[0] = 'X';
	ck_assert_mem_eq(ev.tags[0].value, "v\0x", 3);
	ck_assert_int_eq(ev.tags[0].value[3], '\0');
	ck_assert_uint_eq(ev.tags[1].value_len, 0);
	ck_assert_str_eq(ev.json, "{}");
	ck_assert_mem_eq(ev.sig, sig, 64);
	ck_assert_int_eq(ev.created_at, 42);
	event_free(&ev);
	ck_assert_ptr_null(ev.storage);
	ck_assert_ptr_null(ev.json);
	event_free(&ev);
	event_free(NULL);
}
END_TEST

static Suite *event_suite(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_reference_vectors);
	tcase_add_test(tc, test_reference_fields);
	tcase_add_test(tc, test_escaped_input_same_event);
	tcase_add_test(tc, test_raw_control_characters);
	tcase_add_test(tc, test_unicode_escape_vs_raw);
	tcase_add_test(tc, test_many_tags);
	tcase_add_test(tc, test_tag_index);
	tcase_add_test(tc, test_no_tags_index_null);
	tcase_add_loop_test(tc, test_rejections, 0, (int)NREJECT);
	tcase_add_test(tc, test_reject_structure);
	tcase_add_test(tc, test_reason_buffer);
	tcase_add_test(tc, test_nul_either_form);
	tcase_add_test(tc, test_nul_wrong_preimage);
	tcase_add_test(tc, test_only_seven_escapes_one_form);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_add_test(tc, test_limit_tags);
	tcase_add_test(tc, test_limit_tag_value);
	tcase_add_test(tc, test_limit_tag_value_nul);
	tcase_add_test(tc, test_limit_content);
	tcase_add_test(tc, test_limit_time_window);
	tcase_add_test(tc, test_limits_zero_unlimited);
	suite_add_tcase(s, tc);
	tc = tcase_create("helpers");
	tcase_add_test(tc, test_event_newer);
	tcase_add_test(tc, test_event_class_of);
	tcase_add_test(tc, test_event_build_copies);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(event_suite());
}
