/* search.c - NIP-50 query terms (see search.h). */
#include "search.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

static bool search_is_extension(const char *term, size_t len)
{
	const char *colon = memchr(term, ':', len);

	return colon && colon != term && (size_t)(colon - term) < len - 1;
}

static char *search_lower_dup(const char *s, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return NULL;
	for (size_t i = 0; i < len; i++)
		copy[i] = (char)tolower((unsigned char)s[i]);
	copy[len] = '\0';
	return copy;
}

int search_parse(const char *query, struct search_terms *out)
{
	const char *p = query;

	memset(out, 0, sizeof(*out));
	while (*p && out->n < SEARCH_MAX_TERMS) {
		size_t len;

		while (isspace((unsigned char)*p))
			p++;
		len = strcspn(p, " \t\r\n\f\v");
		if (len && !search_is_extension(p, len)) {
			out->term[out->n] = search_lower_dup(p, len);
			if (!out->term[out->n]) {
				search_free(out);
				return ERR_NOMEM;
			}
			out->n++;
		}
		p += len;
	}
	return 0;
}

void search_free(struct search_terms *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->term[i]);
	t->n = 0;
}

static bool search_contains(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n <= len && i <= len - n; i++) {
		size_t j = 0;

		while (j < n && tolower((unsigned char)hay[i + j]) == (unsigned char)needle[j])
			j++;
		if (j == n)
			return true;
	}
	return false;
}

bool search_matches(const struct search_terms *t, const char *content, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		if (!content || !search_contains(content, len, t->term[i]))
			return false;
	return true;
}

int search_fts_expression(const struct search_terms *t, struct buf *out)
{
	for (size_t i = 0; i < t->n; i++) {
		if (i && buf_append_byte(out, ' '))
			return ERR_NOMEM;
		if (buf_append_byte(out, '"'))
			return ERR_NOMEM;
		for (const char *c = t->term[i]; *c; c++)
			if ((*c == '"' && buf_append_byte(out, '"')) || buf_append_byte(out, *c))
				return ERR_NOMEM;
		if (buf_append_byte(out, '"'))
			return ERR_NOMEM;
	}
	return 0;
}
