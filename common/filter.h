/*
 * filter.h - NIP-01 REQ filters: parsing from JSON and matching events.
 *
 * Fields of one filter are AND'ed, values in one list are OR'ed.  `ids`,
 * `authors` are exact 64-character lowercase hex (no prefixes), stored as raw
 * bytes.  `#x` exists for every single letter a-z, A-Z and compares against
 * the first value of each tag named x, exactly (case-sensitive).  since/until
 * are inclusive.  An empty list (`"kinds": []`) matches nothing.
 *
 * A filter owns all its arrays; filter_free() releases them.
 */
#ifndef COMMON_FILTER_H
#define COMMON_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct event;

struct filter_tag {
	char name;        /* the letter after '#' */
	uint32_t nvalues;
	char **values;    /* each NUL-terminated; lens[i] bytes (may contain NUL);
			     a U+0000 read from JSON is the pair C0 80 (json.h) */
	uint32_t *lens;
};

struct filter {
	uint8_t (*ids)[32];
	uint32_t nids;
	bool has_ids;     /* distinguishes "absent" from "empty list" */
	uint8_t (*authors)[32];
	uint32_t nauthors;
	bool has_authors;
	uint32_t *kinds;
	uint32_t nkinds;
	bool has_kinds;
	struct filter_tag *tags; /* at most one entry per letter */
	uint32_t ntags;
	int64_t since;    /* INT64_MIN when absent */
	int64_t until;    /* INT64_MAX when absent */
	uint32_t limit;   /* meaningful when has_limit */
	bool has_limit;
	char *search;     /* NIP-50 query text, NULL when absent */
};

/* Limits filter_parse() enforces; 0 means "no limit". */
struct filter_limits {
	uint32_t max_values; /* entries in any one list (ids, authors, kinds, #x) */
	uint32_t max_limit;  /* a larger limit is clamped to this, silently */
};

/*
 * Parses one filter object.  Unknown fields are ignored (so are keys like
 * `#xy` or `#1`); a known field or `#x` given twice is ERR_INVAL.  `#e` and
 * `#p` values must be 64-character lowercase hex.  Too many values in a list
 * is ERR_TOOBIG.  limits may be NULL (no limits).  Returns 0 and fills
 * *out, or ERR_INVAL/ERR_TOOBIG/ERR_NOMEM with out empty and a reason with a
 * NIP-01 prefix ("invalid: ...") in reason.
 */
int filter_parse(const cJSON *obj, const struct filter_limits *limits, struct filter *out,
		 char *reason, size_t reason_len);

/* True if ev satisfies every field of f (ignores limit; search needs every
 * query term in ev->content, see search.h). */
bool filter_matches(const struct filter *f, const struct event *ev);

/* True if f can match nothing (an empty list, since > until). */
bool filter_is_empty(const struct filter *f);

/* Deep copy.  Returns 0 or ERR_NOMEM (dst left empty). */
int filter_copy(struct filter *dst, const struct filter *src);

/* Releases the arrays and zeroes f.  NULL-safe. */
void filter_free(struct filter *f);
/* Releases filters[0] to filters[n - 1] and frees the array (malloc'ed).
 * NULL-safe. */
void filters_free(struct filter *filters, uint32_t n);

/* Initialises f to "no constraints" (matches every event). */
void filter_init(struct filter *f);

struct buf;

/*
 * Appends f as one compact JSON object that filter_parse() reads back as the
 * same filter: ids, authors, kinds, the #x lists (in f's order), since,
 * until, limit and search, each only when present.  Strings use the wire
 * escaping of jsonstr.h, so tag values with any bytes survive.  Returns 0 or
 * ERR_NOMEM (out may then hold part of the object).  filter_json.c.
 */
int filter_to_json(const struct filter *f, struct buf *out);

#endif
