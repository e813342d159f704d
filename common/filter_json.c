/*
 * filter_json.c - a struct filter written back as JSON (see filter.h), for
 * the operator's listing of live subscriptions.
 */
#include "filter.h"

#include <string.h>

#include "buf.h"
#include "err.h"
#include "hex.h"
#include "jsonstr.h"

/* Appends `,"name":` (no comma before the first member). */
static int fjson_key(struct buf *out, int *first, const char *name)
{
	int rc = buf_append_str(out, *first ? "\"" : ",\"");

	*first = 0;
	return rc || buf_append_str(out, name) || buf_append_str(out, "\":") ? ERR_NOMEM : 0;
}

static int fjson_keys(struct buf *out, int *first, const char *name, const uint8_t (*keys)[32],
		      uint32_t n)
{
	char hex[65];
	int rc = fjson_key(out, first, name) || buf_append_byte(out, '[');

	for (uint32_t i = 0; i < n && !rc; i++) {
		hex_encode(keys[i], 32, hex);
		rc = (i && buf_append_byte(out, ',')) || buf_append_byte(out, '"') ||
		     buf_append(out, hex, 64) || buf_append_byte(out, '"');
	}
	return rc || buf_append_byte(out, ']') ? ERR_NOMEM : 0;
}

static int fjson_kinds(struct buf *out, int *first, const struct filter *f)
{
	int rc = fjson_key(out, first, "kinds") || buf_append_byte(out, '[');

	for (uint32_t i = 0; i < f->nkinds && !rc; i++)
		rc = (i && buf_append_byte(out, ',')) || buf_append_int(out, f->kinds[i]);
	return rc || buf_append_byte(out, ']') ? ERR_NOMEM : 0;
}

static int fjson_tag(struct buf *out, int *first, const struct filter_tag *t)
{
	char name[3] = { '#', t->name, '\0' };
	int rc = fjson_key(out, first, name) || buf_append_byte(out, '[');

	for (uint32_t i = 0; i < t->nvalues && !rc; i++)
		rc = (i && buf_append_byte(out, ',')) ||
		     jsonstr_append_wire(out, t->values[i], t->lens[i]);
	return rc || buf_append_byte(out, ']') ? ERR_NOMEM : 0;
}

static int fjson_int(struct buf *out, int *first, const char *name, int64_t v)
{
	return fjson_key(out, first, name) || buf_append_int(out, v) ? ERR_NOMEM : 0;
}

int filter_to_json(const struct filter *f, struct buf *out)
{
	int first = 1, rc = buf_append_byte(out, '{');

	if (!rc && f->has_ids)
		rc = fjson_keys(out, &first, "ids", (const uint8_t(*)[32])f->ids, f->nids);
	if (!rc && f->has_authors)
		rc = fjson_keys(out, &first, "authors", (const uint8_t(*)[32])f->authors,
				f->nauthors);
	if (!rc && f->has_kinds)
		rc = fjson_kinds(out, &first, f);
	for (uint32_t i = 0; i < f->ntags && !rc; i++)
		rc = fjson_tag(out, &first, &f->tags[i]);
	if (!rc && f->since != INT64_MIN)
		rc = fjson_int(out, &first, "since", f->since);
	if (!rc && f->until != INT64_MAX)
		rc = fjson_int(out, &first, "until", f->until);
	if (!rc && f->has_limit)
		rc = fjson_int(out, &first, "limit", f->limit);
	if (!rc && f->search)
		rc = fjson_key(out, &first, "search") ||
		     jsonstr_append_wire(out, f->search, strlen(f->search));
	return rc || buf_append_byte(out, '}') ? ERR_NOMEM : 0;
}
