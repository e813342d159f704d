/*
 * filter_match.c - does an event satisfy a filter (see filter.h).
 *
 * Owns the NIP-01 matching rules: fields AND'ed, list values OR'ed, since and
 * until inclusive, `#x` compared byte for byte (with lengths) against the
 * first value of every tag named x.  A list that is present but empty
 * matches nothing.  `search` (NIP-50) needs every term of the query in the
 * event's decoded content (search.h); an event carried without content
 * matches no search.
 */
#include "filter.h"

#include <string.h>

#include "event.h"
#include "search.h"

static bool match_key(const uint8_t (*keys)[32], uint32_t n, const uint8_t *key)
{
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(keys[i], key, 32) == 0)
			return true;
	return false;
}

static bool match_kind(const uint32_t *kinds, uint32_t n, uint32_t kind)
{
	for (uint32_t i = 0; i < n; i++)
		if (kinds[i] == kind)
			return true;
	return false;
}

static bool match_value(const struct filter_tag *t, const char *value, uint32_t len)
{
	for (uint32_t i = 0; i < t->nvalues; i++)
		if (t->lens[i] == len && memcmp(t->values[i], value, len) == 0)
			return true;
	return false;
}

/* True when some tag of ev named t->name has one of t's values. */
static bool match_tag(const struct filter_tag *t, const struct event *ev)
{
	for (uint32_t i = 0; i < ev->ntags; i++) {
		const struct event_tag *et = &ev->tags[i];

		if (et->name == t->name && match_value(t, et->value, et->value_len))
			return true;
	}
	return false;
}

static bool match_search(const char *query, const struct event *ev)
{
	struct search_terms terms;
	bool hit;

	if (search_parse(query, &terms))
		return false;
	hit = search_matches(&terms, ev->content, ev->content_len);
	search_free(&terms);
	return hit;
}

bool filter_matches(const struct filter *f, const struct event *ev)
{
	if (ev->created_at < f->since || ev->created_at > f->until)
		return false;
	if (f->has_kinds && !match_kind(f->kinds, f->nkinds, ev->kind))
		return false;
	if (f->has_authors && !match_key((const uint8_t(*)[32])f->authors, f->nauthors, ev->pubkey))
		return false;
	if (f->has_ids && !match_key((const uint8_t(*)[32])f->ids, f->nids, ev->id))
		return false;
	for (uint32_t i = 0; i < f->ntags; i++)
		if (!match_tag(&f->tags[i], ev))
			return false;
	return !f->search || match_search(f->search, ev);
}

bool filter_is_empty(const struct filter *f)
{
	if (f->since > f->until)
		return true;
	if ((f->has_ids && f->nids == 0) || (f->has_authors && f->nauthors == 0) ||
	    (f->has_kinds && f->nkinds == 0))
		return true;
	for (uint32_t i = 0; i < f->ntags; i++)
		if (f->tags[i].nvalues == 0)
			return true;
	return false;
}
