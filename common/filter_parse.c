/*
 * filter_parse.c - one REQ filter object from JSON into a struct filter (see
 * filter.h).
 *
 * Owns the types and ranges of the NIP-01 filter fields, the `max_values`
 * and `max_limit` limits, and the rule that unknown fields (including
 * multi-character `#xy` keys) are ignored while a known field named twice is
 * refused, since which copy wins would be a guess.
 */
#include "filter.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hex.h"

struct fparse {
	struct filter *f;
	const struct filter_limits *lim;
	unsigned seen; /* bit per entry of filter_fields */
	char *reason;
	size_t reason_len;
};

__attribute__((format(printf, 3, 4))) static int fparse_fail(struct fparse *p, int code,
							    const char *fmt, ...)
{
	va_list ap;

	if (p->reason_len) {
		va_start(ap, fmt);
		vsnprintf(p->reason, p->reason_len, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* The array in item, checked for type and for max_values. */
static int fparse_list(struct fparse *p, const cJSON *item, const char *field, uint32_t *n)
{
	int size;

	if (!cJSON_IsArray(item))
		return fparse_fail(p, ERR_INVAL, "invalid: %s must be an array", field);
	size = cJSON_GetArraySize(item);
	if (p->lim->max_values && (uint32_t)size > p->lim->max_values)
		return fparse_fail(p, ERR_TOOBIG, "invalid: too many values in %s (max %u)", field,
				   p->lim->max_values);
	*n = (uint32_t)size;
	return 0;
}

/* True when item is a number holding an integer in [lo, hi]; values beyond
 * the int64 range count as integers and saturate. */
static bool fparse_integer(const cJSON *item, double lo, double hi, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(item))
		return false;
	d = item->valuedouble;
	if (!(d >= lo && d <= hi))
		return false;
	if (d >= 9223372036854775807.0) {
		*out = INT64_MAX;
		return true;
	}
	if (d <= -9223372036854775808.0) {
		*out = INT64_MIN;
		return true;
	}
	if ((double)(int64_t)d != d)
		return false;
	*out = (int64_t)d;
	return true;
}

/* ids and authors: lists of exact 64-character lowercase hex. */
static int fparse_keys(struct fparse *p, const cJSON *item, const char *field,
		       uint8_t (**keys)[32], uint32_t *nkeys, bool *has)
{
	const cJSON *el;
	uint32_t n;
	int rc = fparse_list(p, item, field, &n);

	if (rc)
		return rc;
	*has = true;
	if (n == 0)
		return 0;
	*keys = malloc(n * sizeof(**keys));
	if (!*keys)
		return fparse_fail(p, ERR_NOMEM, "error: out of memory");
	cJSON_ArrayForEach(el, item) {
		if (!cJSON_IsString(el) || !el->valuestring ||
		    hex_decode(el->valuestring, strlen(el->valuestring), (*keys)[*nkeys], 32))
			return fparse_fail(p, ERR_INVAL,
					   "invalid: %s must be 64-character lowercase hex strings",
					   field);
		(*nkeys)++;
	}
	return 0;
}

static int fparse_ids(struct fparse *p, const cJSON *item)
{
	return fparse_keys(p, item, "ids", &p->f->ids, &p->f->nids, &p->f->has_ids);
}

static int fparse_authors(struct fparse *p, const cJSON *item)
{
	return fparse_keys(p, item, "authors", &p->f->authors, &p->f->nauthors,
			   &p->f->has_authors);
}

static int fparse_kinds(struct fparse *p, const cJSON *item)
{
	struct filter *f = p->f;
	const cJSON *el;
	uint32_t n;
	int rc = fparse_list(p, item, "kinds", &n);

	if (rc)
		return rc;
	f->has_kinds = true;
	if (n == 0)
		return 0;
	f->kinds = malloc(n * sizeof(*f->kinds));
	if (!f->kinds)
		return fparse_fail(p, ERR_NOMEM, "error: out of memory");
	cJSON_ArrayForEach(el, item) {
		int64_t kind;

		if (!fparse_integer(el, 0, 65535, &kind))
			return fparse_fail(p, ERR_INVAL,
					   "invalid: kinds must be integers 0-65535");
		f->kinds[f->nkinds++] = (uint32_t)kind;
	}
	return 0;
}

static int fparse_time(struct fparse *p, const cJSON *item, const char *field, int64_t *out)
{
	if (!fparse_integer(item, -1e300, 1e300, out))
		return fparse_fail(p, ERR_INVAL, "invalid: %s must be an integer", field);
	return 0;
}

static int fparse_since(struct fparse *p, const cJSON *item)
{
	return fparse_time(p, item, "since", &p->f->since);
}

static int fparse_until(struct fparse *p, const cJSON *item)
{
	return fparse_time(p, item, "until", &p->f->until);
}

/* A limit above max_limit (or above what a uint32_t holds) is clamped. */
static int fparse_limit(struct fparse *p, const cJSON *item)
{
	uint32_t max = p->lim->max_limit ? p->lim->max_limit : UINT32_MAX;
	int64_t limit;

	if (!fparse_integer(item, 0, 1e300, &limit))
		return fparse_fail(p, ERR_INVAL, "invalid: limit must be a non-negative integer");
	p->f->limit = limit > (int64_t)max ? max : (uint32_t)limit;
	p->f->has_limit = true;
	return 0;
}

static int fparse_search(struct fparse *p, const cJSON *item)
{
	if (!cJSON_IsString(item) || !item->valuestring)
		return fparse_fail(p, ERR_INVAL, "invalid: search must be a string");
	p->f->search = strdup(item->valuestring);
	if (!p->f->search)
		return fparse_fail(p, ERR_NOMEM, "error: out of memory");
	return 0;
}

static const struct {
	const char *name;
	int (*parse)(struct fparse *p, const cJSON *item);
} filter_fields[] = {
	{ "ids", fparse_ids },       { "authors", fparse_authors }, { "kinds", fparse_kinds },
	{ "since", fparse_since },   { "until", fparse_until },     { "limit", fparse_limit },
	{ "search", fparse_search },
};

#define FILTER_NFIELDS (sizeof(filter_fields) / sizeof(filter_fields[0]))

/* `#e` and `#p` name events and pubkeys: exact lowercase hex like ids. */
static bool fparse_tag_value_ok(char name, const char *value)
{
	uint8_t raw[32];

	if (name != 'e' && name != 'p')
		return true;
	return hex_decode(value, strlen(value), raw, sizeof(raw)) == 0;
}

/* Fills t (already counted in f->ntags) from the array in item. */
static int fparse_tag_values(struct fparse *p, struct filter_tag *t, const cJSON *item,
			     const char *field, uint32_t n)
{
	const cJSON *el;

	t->values = calloc(n ? n : 1, sizeof(*t->values));
	t->lens = calloc(n ? n : 1, sizeof(*t->lens));
	if (!t->values || !t->lens)
		return fparse_fail(p, ERR_NOMEM, "error: out of memory");
	cJSON_ArrayForEach(el, item) {
		if (!cJSON_IsString(el) || !el->valuestring)
			return fparse_fail(p, ERR_INVAL, "invalid: %s must be an array of strings",
					   field);
		if (!fparse_tag_value_ok(t->name, el->valuestring))
			return fparse_fail(p, ERR_INVAL,
					   "invalid: %s values must be 64-character lowercase hex",
					   field);
		t->values[t->nvalues] = strdup(el->valuestring);
		if (!t->values[t->nvalues])
			return fparse_fail(p, ERR_NOMEM, "error: out of memory");
		t->lens[t->nvalues++] = (uint32_t)strlen(el->valuestring);
	}
	return 0;
}

/* A `#x` key: x is one ASCII letter. */
static int fparse_tag(struct fparse *p, const cJSON *item)
{
	struct filter *f = p->f;
	const char *field = item->string;
	struct filter_tag *grown;
	uint32_t n;
	int rc;

	for (uint32_t i = 0; i < f->ntags; i++)
		if (f->tags[i].name == field[1])
			return fparse_fail(p, ERR_INVAL, "invalid: duplicate field %s", field);
	rc = fparse_list(p, item, field, &n);
	if (rc)
		return rc;
	grown = realloc(f->tags, (f->ntags + 1) * sizeof(*f->tags));
	if (!grown)
		return fparse_fail(p, ERR_NOMEM, "error: out of memory");
	f->tags = grown;
	memset(&f->tags[f->ntags], 0, sizeof(f->tags[0]));
	f->tags[f->ntags].name = field[1];
	f->ntags++;
	return fparse_tag_values(p, &f->tags[f->ntags - 1], item, field, n);
}

static bool fparse_is_tag_key(const char *key)
{
	return key && key[0] == '#' &&
	       ((key[1] >= 'a' && key[1] <= 'z') || (key[1] >= 'A' && key[1] <= 'Z')) &&
	       key[2] == '\0';
}

/* Routes one member to its parser; unknown keys are ignored. */
static int fparse_member(struct fparse *p, const cJSON *item)
{
	if (fparse_is_tag_key(item->string))
		return fparse_tag(p, item);
	for (size_t i = 0; i < FILTER_NFIELDS; i++) {
		if (!item->string || strcmp(item->string, filter_fields[i].name) != 0)
			continue;
		if (p->seen & (1u << i))
			return fparse_fail(p, ERR_INVAL, "invalid: duplicate field %s",
					   filter_fields[i].name);
		p->seen |= 1u << i;
		return filter_fields[i].parse(p, item);
	}
	return 0;
}

int filter_parse(const cJSON *obj, const struct filter_limits *limits, struct filter *out,
		 char *reason, size_t reason_len)
{
	static const struct filter_limits unlimited;
	struct fparse p = { out, limits ? limits : &unlimited, 0, reason, reason_len };
	const cJSON *item;
	int rc;

	filter_init(out);
	if (reason_len)
		reason[0] = '\0';
	if (!cJSON_IsObject(obj))
		return fparse_fail(&p, ERR_INVAL, "invalid: filter must be a JSON object");
	cJSON_ArrayForEach(item, obj) {
		rc = fparse_member(&p, item);
		if (rc) {
			filter_free(out);
			return rc;
		}
	}
	return 0;
}
