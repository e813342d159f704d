/*
 * event.h - a Nostr event as the relay handles it after validation.
 *
 * relayd builds a struct event from a client's JSON with event_parse(): it
 * checks the structure (NIP-01 types, lowercase hex lengths, kind range,
 * limits), writes the canonical serialization, and checks that the id is the
 * SHA-256 of `[0,pubkey,created_at,kind,tags,content]` re-serialized from the
 * *decoded* strings.  The signature is checked separately (event_sig.h) so the
 * caller can answer duplicates first.
 *
 * stored never parses JSON: it receives the same struct over the wire
 * (proto/msg.h) and uses the indexed tags and the canonical JSON as they are.
 *
 * Memory: every pointer inside a struct event points into storage owned by
 * the event; event_free() releases it all.
 */
#ifndef COMMON_EVENT_H
#define COMMON_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define EVENT_ID_LEN 32
#define EVENT_PUBKEY_LEN 32
#define EVENT_SIG_LEN 64
#define EVENT_KIND_MAX 65535

/* The first value of a tag whose name is a single letter (a-z, A-Z): the only
 * tags filters can select on (`#x`). */
struct event_tag {
	char name;
	uint32_t value_len;
	const char *value; /* not NUL-terminated in general; value_len bytes; a
			      U+0000 is the pair C0 80 (json.h) */
};

enum event_class {
	EVENT_REGULAR,
	EVENT_REPLACEABLE, /* 0, 3, 10000-19999: one per (pubkey, kind) */
	EVENT_EPHEMERAL,   /* 20000-29999: never stored */
	EVENT_ADDRESSABLE, /* 30000-39999: one per (kind, pubkey, d) */
};

struct event {
	uint8_t id[EVENT_ID_LEN];
	uint8_t pubkey[EVENT_PUBKEY_LEN];
	uint8_t sig[EVENT_SIG_LEN];
	int64_t created_at;
	uint32_t kind;
	struct event_tag *tags; /* single-letter tags' first values, in tag order */
	uint32_t ntags;
	char *json; /* canonical JSON object {"id",...,"sig"}, NUL-terminated */
	uint32_t json_len;
	void *storage; /* owns tags, json and tag values */
	/* Derived facts the relay acts on, so stored never reads the JSON. */
	int64_t expiration;  /* NIP-40 "expiration" tag, 0 when absent or malformed */
	uint32_t flags;      /* enum event_flags */
	char *content;       /* decoded content, NUL-terminated, owned (separately
				allocated; NULL when not carried) */
	uint32_t content_len;
};

enum event_flags {
	EVENT_FLAG_PROTECTED = 1,   /* has a ["-"] tag (NIP-70) */
	EVENT_FLAG_VANISH_HERE = 2, /* kind 62 naming this relay or ALL_RELAYS (NIP-62) */
};

/* Copies len bytes of content into ev->content, NUL-terminated, replacing
 * and freeing any earlier copy.  Returns 0, or ERR_NOMEM with ev unchanged. */
int event_set_content(struct event *ev, const char *content, uint32_t len);

/* Limits event_parse() enforces; 0 means "no limit" for each field. */
struct event_limits {
	uint32_t max_tags;         /* number of tags */
	uint32_t max_tag_value;    /* bytes in any one tag element */
	uint32_t max_content;      /* characters of content (NIP-11) */
	int64_t now;               /* seconds; used with the two windows below */
	int64_t max_past_seconds;  /* created_at older than now - this is refused */
	int64_t max_future_seconds;/* created_at newer than now + this is refused */
};

/*
 * Validates obj, the event object of ["EVENT", obj], and fills *out.
 * limits may be NULL (no limits).  reason gets at most reason_len bytes,
 * NUL-terminated.
 *
 * Returns 0 with *out filled; the caller frees it with event_free().  On
 * failure *out owns nothing and reason holds a NIP-01 reason ("invalid:
 * ...").  The error is ERR_TOOBIG for a size limit (max_tags, max_tag_value,
 * max_content), ERR_NOMEM, or ERR_INVAL for anything else.  A well-formed
 * id is copied to out->id even on failure, so the caller can answer
 * `OK id false`.
 *
 * It checks the field types, lowercase hex lengths (64/64/128), kind
 * 0..65535, created_at 0..2^53-1 and inside the limits' window around now,
 * and that id is the SHA-256 of the canonical serialization.  An unknown or
 * repeated field is refused.  Numbers are judged by value, so `1.0` counts
 * as the integer 1.  The signature is not checked (event_sig.h), so the
 * caller can answer duplicates first.
 *
 * The id may hash either of two preimages: NIP-01's, with control
 * characters other than the seven raw, or JSON.stringify()'s, with them as
 * \u00XX (what nostr-tools hashes).  The second is tried only when the
 * first misses and the event holds such a character.  obj comes from
 * json_parse() (json.h), so a U+0000 is the pair C0 80 in its strings and
 * in the tag values and content of *out.
 */
int event_parse(const cJSON *obj, const struct event_limits *limits, struct event *out,
		char *reason, size_t reason_len);

/* Releases everything the event owns and zeroes it.  NULL-safe. */
void event_free(struct event *ev);

/* Which storage class kind belongs to (NIP-01). */
enum event_class event_class_of(uint32_t kind);

/*
 * The first value of the first tag named name, borrowed from ev, with its
 * length in *len; NULL with *len 0 when there is none.  For addressable
 * events the `d` value is the address, and a missing one means "".
 */
const char *event_tag_value(const struct event *ev, char name, uint32_t *len);

/*
 * NIP-01 order for replaceable versions: true if a should replace b, that is
 * a is newer, or equally new with the lexically lower id.
 */
bool event_newer(int64_t a_created, const uint8_t *a_id, int64_t b_created, const uint8_t *b_id);

/*
 * Assembles *out from parts already validated elsewhere, as stored's wire
 * decoder does.  Copies everything, so tags[i].value may point anywhere.
 * Returns 0 with *out filled (free it with event_free()), or ERR_NOMEM with
 * *out empty.
 */
int event_build(struct event *out, const uint8_t id[EVENT_ID_LEN],
		const uint8_t pubkey[EVENT_PUBKEY_LEN], const uint8_t sig[EVENT_SIG_LEN],
		int64_t created_at, uint32_t kind, const struct event_tag *tags, uint32_t ntags,
		const char *json, uint32_t json_len);

#endif
