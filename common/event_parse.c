/*
 * event_parse.c - a client's EVENT object checked and turned into a struct
 * event (see event.h).
 *
 * Owns the NIP-01 structural rules (exactly the seven fields, their types,
 * lowercase hex lengths, integer ranges), the limits of struct event_limits,
 * the id preimage `[0,pubkey,created_at,kind,tags,content]` and the canonical
 * stored JSON.  Both serializations are written from the strings cJSON has
 * already decoded, through jsonstr_append(), so `"\u00e9"` and `"é"` hash
 * alike and what is hashed is what is stored.
 *
 * A string holding U+0000 arrives with it as the two bytes C0 80 (json.h),
 * which jsonstr_append() hashes as a NUL and the wire form writes as \u0000.
 *
 * Which id preimage: NIP-01 escapes exactly seven characters and writes the
 * other control characters (U+0000-U+001F) raw; that form is hashed first.
 * JSON.stringify(), which nostr-tools and most JavaScript clients hash,
 * writes those as \u00XX instead.  Only when the first hash misses and a
 * string holds such a character is the second form tried, so events
 * without one cost a single hash.
 *
 * Cost: one growable buffer reserved once for both serializations, and the
 * event's own single allocation (plus one for the tag index when an event has
 * more than EVENT_PARSE_INLINE_TAGS single-letter tags).
 */
#include "event.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "buf.h"
#include "err.h"
#include "hex.h"
#include "jsonstr.h"
#include "utf8.h"

/* The largest created_at accepted: every integer up to it is exact in the
 * double cJSON stores, so we re-serialize exactly the number that was sent.
 * (It is also JavaScript's Number.MAX_SAFE_INTEGER.) */
#define EVENT_CREATED_AT_MAX 9007199254740991.0

/* Single-letter tags indexed without a heap allocation. */
#define EVENT_PARSE_INLINE_TAGS 16

/* The seven NIP-01 fields, in canonical order. */
enum field {
	F_ID,
	F_PUBKEY,
	F_CREATED_AT,
	F_KIND,
	F_TAGS,
	F_CONTENT,
	F_SIG,
	F_COUNT,
};

static const char *const field_names[F_COUNT] = {
	"id", "pubkey", "created_at", "kind", "tags", "content", "sig",
};

/* What one call has learnt about the object so far. */
struct parse_state {
	const cJSON *field[F_COUNT];
	int64_t created_at;
	uint32_t kind;
	uint8_t pubkey[EVENT_PUBKEY_LEN];
	uint8_t sig[EVENT_SIG_LEN];
	uint32_t nindexed;   /* tags that go into the index */
	size_t text_bytes;   /* bytes of all tag elements and content */
	size_t nelements;    /* tag elements, for the size estimate */
	char *reason;
	size_t reason_len;
};

__attribute__((format(printf, 3, 4))) static int parse_fail(struct parse_state *st, int code,
							   const char *fmt, ...)
{
	va_list ap;

	if (st->reason_len) {
		va_start(ap, fmt);
		vsnprintf(st->reason, st->reason_len, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int field_index(const char *name)
{
	for (int i = 0; i < F_COUNT; i++)
		if (name && strcmp(name, field_names[i]) == 0)
			return i;
	return -1;
}

/* Files each member under its field; refuses unknown and repeated names. */
static int parse_collect(struct parse_state *st, const cJSON *obj)
{
	const cJSON *item;

	if (!cJSON_IsObject(obj))
		return parse_fail(st, ERR_INVAL, "invalid: event must be a JSON object");
	cJSON_ArrayForEach(item, obj) {
		int i = field_index(item->string);

		if (i < 0)
			return parse_fail(st, ERR_INVAL, "invalid: unexpected field in event");
		if (st->field[i])
			return parse_fail(st, ERR_INVAL, "invalid: duplicate field %s", field_names[i]);
		st->field[i] = item;
	}
	for (int i = 0; i < F_COUNT; i++)
		if (!st->field[i])
			return parse_fail(st, ERR_INVAL, "invalid: missing field %s", field_names[i]);
	return 0;
}

/* Decodes a lowercase hex string field of exactly 2*len characters. */
static int parse_hex(struct parse_state *st, enum field f, uint8_t *out, size_t len)
{
	const cJSON *item = st->field[f];

	if (!cJSON_IsString(item) || !item->valuestring ||
	    hex_decode(item->valuestring, strlen(item->valuestring), out, len))
		return parse_fail(st, ERR_INVAL, "invalid: %s must be %zu lowercase hex characters",
				  field_names[f], 2 * len);
	return 0;
}

/* True when item is a number holding an integer in [lo, hi]. */
static bool parse_integer(const cJSON *item, double lo, double hi, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(item))
		return false;
	d = item->valuedouble;
	if (!(d >= lo && d <= hi) || (double)(int64_t)d != d)
		return false;
	*out = (int64_t)d;
	return true;
}

static int parse_numbers(struct parse_state *st)
{
	int64_t kind;

	if (!parse_integer(st->field[F_CREATED_AT], 0, EVENT_CREATED_AT_MAX, &st->created_at))
		return parse_fail(st, ERR_INVAL,
				  "invalid: created_at must be a non-negative integer of seconds");
	if (!parse_integer(st->field[F_KIND], 0, EVENT_KIND_MAX, &kind))
		return parse_fail(st, ERR_INVAL, "invalid: kind must be an integer 0-%d",
				  EVENT_KIND_MAX);
	st->kind = (uint32_t)kind;
	return 0;
}

/* True when tag's first element names an indexed tag (single ASCII letter)
 * and it has a value to index.  A `d` tag always counts, its value "" when
 * it has none: the first `d` tag names an addressable event's address, and
 * ["d"] is the address "" (NIP-01), not "no d tag" (which would let a later
 * ["d", "x"] name it). */
static bool tag_is_indexed(const cJSON *tag)
{
	const cJSON *name = tag->child;
	const char *s = name ? name->valuestring : NULL;

	if (!s || (!name->next && strcmp(s, "d") != 0))
		return false;
	return ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) && s[1] == '\0';
}

/* One tag: an array of strings, each within max_tag_value bytes. */
static int parse_tag(struct parse_state *st, const cJSON *tag, const struct event_limits *lim)
{
	const cJSON *el;

	if (!cJSON_IsArray(tag))
		return parse_fail(st, ERR_INVAL, "invalid: tags must be an array of arrays of strings");
	cJSON_ArrayForEach(el, tag) {
		size_t len;

		if (!cJSON_IsString(el) || !el->valuestring)
			return parse_fail(st, ERR_INVAL,
					  "invalid: tags must be an array of arrays of strings");
		len = strlen(el->valuestring);
		/* A decoded U+0000 takes two bytes here and counts as one. */
		if (lim->max_tag_value && len > lim->max_tag_value &&
		    jsonstr_decoded_len(el->valuestring, len) > lim->max_tag_value)
			return parse_fail(st, ERR_TOOBIG, "invalid: tag element too long (max %u bytes)",
					  lim->max_tag_value);
		st->text_bytes += len;
		st->nelements++;
	}
	if (tag_is_indexed(tag))
		st->nindexed++;
	return 0;
}

static int parse_tags(struct parse_state *st, const struct event_limits *lim)
{
	const cJSON *tags = st->field[F_TAGS];
	const cJSON *tag;
	uint32_t ntags = 0;
	int rc;

	if (!cJSON_IsArray(tags))
		return parse_fail(st, ERR_INVAL, "invalid: tags must be an array of arrays of strings");
	cJSON_ArrayForEach(tag, tags) {
		if (lim->max_tags && ++ntags > lim->max_tags)
			return parse_fail(st, ERR_TOOBIG, "invalid: too many tags (max %u)",
					  lim->max_tags);
		rc = parse_tag(st, tag, lim);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_content(struct parse_state *st, const struct event_limits *lim)
{
	const cJSON *content = st->field[F_CONTENT];
	size_t len;

	if (!cJSON_IsString(content) || !content->valuestring)
		return parse_fail(st, ERR_INVAL, "invalid: content must be a string");
	len = strlen(content->valuestring);
	/* No text has more characters than bytes, so only a content longer
	 * in bytes than the limit needs its characters counted. */
	if (lim->max_content && len > lim->max_content &&
	    utf8_chars(content->valuestring, len) > lim->max_content)
		return parse_fail(st, ERR_TOOBIG, "invalid: content too long (max %u characters)",
				  lim->max_content);
	st->text_bytes += len;
	return 0;
}

/* created_at against [now - max_past, now + max_future]; now is a real time
 * in seconds, so the subtractions below cannot overflow. */
static int parse_window(struct parse_state *st, const struct event_limits *lim)
{
	int64_t t = st->created_at;

	if (lim->max_future_seconds > 0 && t > lim->now && t - lim->now > lim->max_future_seconds)
		return parse_fail(st, ERR_INVAL, "invalid: created_at too far in the future");
	if (lim->max_past_seconds > 0 && t < lim->now && lim->now - t > lim->max_past_seconds)
		return parse_fail(st, ERR_INVAL, "invalid: created_at too far in the past");
	return 0;
}

/* Everything except the id hash, in the order a client would fix things. */
static int parse_check(struct parse_state *st, const struct event_limits *lim)
{
	int rc;

	if ((rc = parse_hex(st, F_PUBKEY, st->pubkey, EVENT_PUBKEY_LEN)) ||
	    (rc = parse_hex(st, F_SIG, st->sig, EVENT_SIG_LEN)) || (rc = parse_numbers(st)) ||
	    (rc = parse_tags(st, lim)) || (rc = parse_content(st, lim)) ||
	    (rc = parse_window(st, lim)))
		return rc;
	return 0;
}

/* How strings are escaped: jsonstr_append for the hash, _wire for output. */
typedef int (*string_writer)(struct buf *b, const char *s, size_t len);

static int append_string_as(struct buf *b, const cJSON *item, string_writer write)
{
	return write(b, item->valuestring, strlen(item->valuestring));
}

static int append_string(struct buf *b, const cJSON *item)
{
	return append_string_as(b, item, jsonstr_append);
}

/* `[[..],..]` with no whitespace. */
static int append_tags(struct buf *b, const cJSON *tags, string_writer write)
{
	const cJSON *tag, *el;

	if (buf_append_byte(b, '['))
		return ERR_NOMEM;
	cJSON_ArrayForEach(tag, tags) {
		if (tag != tags->child && buf_append_byte(b, ','))
			return ERR_NOMEM;
		if (buf_append_byte(b, '['))
			return ERR_NOMEM;
		cJSON_ArrayForEach(el, tag) {
			if (el != tag->child && buf_append_byte(b, ','))
				return ERR_NOMEM;
			if (append_string_as(b, el, write))
				return ERR_NOMEM;
		}
		if (buf_append_byte(b, ']'))
			return ERR_NOMEM;
	}
	return buf_append_byte(b, ']');
}

/* `[0,"<pubkey>",<created_at>,<kind>,<tags>,"<content>"]`, the id preimage,
 * its tags and content written by write. */
static int append_preimage(struct buf *b, const struct parse_state *st, string_writer write)
{
	if (buf_append_str(b, "[0,") || append_string(b, st->field[F_PUBKEY]) ||
	    buf_append_byte(b, ',') || buf_append_int(b, st->created_at) ||
	    buf_append_byte(b, ',') || buf_append_int(b, st->kind) || buf_append_byte(b, ',') ||
	    append_tags(b, st->field[F_TAGS], write) || buf_append_byte(b, ',') ||
	    append_string_as(b, st->field[F_CONTENT], write) || buf_append_byte(b, ']'))
		return ERR_NOMEM;
	return 0;
}

/* True if some tag element or the content holds a character the two
 * preimage forms write differently (jsonstr_forms_differ()). */
static bool preimage_forms_differ(const struct parse_state *st)
{
	const cJSON *tag, *el, *content = st->field[F_CONTENT];

	cJSON_ArrayForEach(tag, st->field[F_TAGS]) {
		cJSON_ArrayForEach(el, tag)
			if (jsonstr_forms_differ(el->valuestring, strlen(el->valuestring)))
				return true;
	}
	return jsonstr_forms_differ(content->valuestring, strlen(content->valuestring));
}

/* Whether the preimage written by write hashes to id.  b is reused. */
static int preimage_matches(const struct parse_state *st, string_writer write, struct buf *b,
			    const uint8_t id[EVENT_ID_LEN], bool *match)
{
	uint8_t hash[SHA256_DIGEST_LENGTH];

	buf_reset(b);
	if (append_preimage(b, st, write))
		return ERR_NOMEM;
	SHA256((const unsigned char *)b->data, b->len, hash);
	*match = memcmp(hash, id, EVENT_ID_LEN) == 0;
	return 0;
}

/* `{"id":..,"pubkey":..,"created_at":..,"kind":..,"tags":..,"content":..,"sig":..}`,
 * escaped for the wire: valid JSON that decodes to the strings hashed. */
static int append_canonical(struct buf *b, const struct parse_state *st)
{
	if (buf_append_str(b, "{\"id\":") || append_string(b, st->field[F_ID]) ||
	    buf_append_str(b, ",\"pubkey\":") || append_string(b, st->field[F_PUBKEY]) ||
	    buf_append_str(b, ",\"created_at\":") || buf_append_int(b, st->created_at) ||
	    buf_append_str(b, ",\"kind\":") || buf_append_int(b, st->kind) ||
	    buf_append_str(b, ",\"tags\":") || append_tags(b, st->field[F_TAGS], jsonstr_append_wire) ||
	    buf_append_str(b, ",\"content\":") ||
	    append_string_as(b, st->field[F_CONTENT], jsonstr_append_wire) ||
	    buf_append_str(b, ",\"sig\":") || append_string(b, st->field[F_SIG]) ||
	    buf_append_byte(b, '}'))
		return ERR_NOMEM;
	return 0;
}

/* The first values of single-letter tags, pointing into the cJSON tree
 * (event_build() copies them). */
static void index_tags(const struct parse_state *st, struct event_tag *out)
{
	const cJSON *tag;
	uint32_t n = 0;

	cJSON_ArrayForEach(tag, st->field[F_TAGS]) {
		const char *value;

		if (!tag_is_indexed(tag))
			continue;
		value = tag->child->next ? tag->child->next->valuestring : "";
		out[n].name = tag->child->valuestring[0];
		out[n].value = value;
		out[n].value_len = (uint32_t)strlen(value);
		n++;
	}
}

/* The NIP-40 expiration: a tag ["expiration", "<decimal seconds>"]; a
 * malformed value counts as none.  0 and negative values are moments long
 * past, kept as 1 (0 means "none" in struct event), so such an event is
 * refused as expired, not kept forever. */
static int64_t parse_expiration(const cJSON *tag)
{
	const cJSON *value = tag->child ? tag->child->next : NULL;
	char *end;
	long long v;

	if (!value || !value->valuestring[0])
		return 0;
	v = strtoll(value->valuestring, &end, 10);
	if (*end != '\0')
		return 0;
	return v > 0 ? (int64_t)v : 1;
}

/* Facts from multi-letter and special tags, and the decoded content. */
static int parse_extras(const struct parse_state *st, struct event *out)
{
	const cJSON *tag;
	const char *content = st->field[F_CONTENT]->valuestring;

	cJSON_ArrayForEach(tag, st->field[F_TAGS]) {
		const char *name = tag->child ? tag->child->valuestring : "";

		if (strcmp(name, "expiration") == 0 && out->expiration == 0)
			out->expiration = parse_expiration(tag);
		else if (strcmp(name, "-") == 0)
			out->flags |= EVENT_FLAG_PROTECTED;
	}
	return event_set_content(out, content, (uint32_t)strlen(content));
}

static int parse_build(struct parse_state *st, const uint8_t id[EVENT_ID_LEN], struct buf *b,
		       struct event *out)
{
	struct event_tag inline_tags[EVENT_PARSE_INLINE_TAGS];
	struct event_tag *tags = inline_tags;
	int rc;

	buf_reset(b);
	if (append_canonical(b, st) || b->len > UINT32_MAX)
		return parse_fail(st, ERR_NOMEM, "error: out of memory");
	if (st->nindexed > EVENT_PARSE_INLINE_TAGS) {
		tags = malloc(st->nindexed * sizeof(*tags));
		if (!tags)
			return parse_fail(st, ERR_NOMEM, "error: out of memory");
	}
	index_tags(st, tags);
	rc = event_build(out, id, st->pubkey, st->sig, st->created_at, st->kind, tags,
			 st->nindexed, b->data, (uint32_t)b->len);
	if (tags != inline_tags)
		free(tags);
	if (!rc)
		rc = parse_extras(st, out);
	if (rc) {
		event_free(out);
		return parse_fail(st, rc, "error: out of memory");
	}
	return 0;
}

/* Hashes the preimage, compares it with the id, then builds the event.
 * The NIP-01 form first; the JSON.stringify() form only when it differs
 * (see the top of this file). */
static int parse_finish(struct parse_state *st, const uint8_t id[EVENT_ID_LEN], struct event *out)
{
	/* Escaping at most doubles each string; the fixed part is under 300
	 * bytes and each element adds at most 4 ("" and , and []). */
	size_t estimate = 2 * st->text_bytes + 4 * st->nelements + 512;
	struct buf b = BUF_INIT;
	bool match = false;
	int rc = buf_reserve(&b, estimate) ? ERR_NOMEM : 0;

	if (!rc)
		rc = preimage_matches(st, jsonstr_append, &b, id, &match);
	if (!rc && !match && preimage_forms_differ(st))
		rc = preimage_matches(st, jsonstr_append_wire, &b, id, &match);
	if (rc)
		rc = parse_fail(st, ERR_NOMEM, "error: out of memory");
	else if (!match)
		rc = parse_fail(st, ERR_INVAL, "invalid: id does not match the event hash");
	else
		rc = parse_build(st, id, &b, out);
	buf_free(&b);
	return rc;
}

/* The id as the client sent it, when it is well-formed, else all zeroes;
 * looked up before anything can fail so every `OK` reply can name it. */
static void parse_peek_id(const cJSON *obj, uint8_t id[EVENT_ID_LEN])
{
	const cJSON *item = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, "id") : NULL;

	if (!cJSON_IsString(item) || !item->valuestring ||
	    hex_decode(item->valuestring, strlen(item->valuestring), id, EVENT_ID_LEN))
		memset(id, 0, EVENT_ID_LEN);
}

int event_parse(const cJSON *obj, const struct event_limits *limits, struct event *out,
		char *reason, size_t reason_len)
{
	static const struct event_limits unlimited;
	struct parse_state st = { .reason = reason, .reason_len = reason_len };
	uint8_t id[EVENT_ID_LEN];
	int rc;

	memset(out, 0, sizeof(*out));
	if (reason_len)
		reason[0] = '\0';
	if ((rc = parse_collect(&st, obj)) || (rc = parse_hex(&st, F_ID, id, EVENT_ID_LEN)) ||
	    (rc = parse_check(&st, limits ? limits : &unlimited)) ||
	    (rc = parse_finish(&st, id, out))) {
		memset(out, 0, sizeof(*out));
		parse_peek_id(obj, out->id);
		return rc;
	}
	return 0;
}
