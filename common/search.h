/*
 * search.h - NIP-50 search queries: the words to look for.
 *
 * A query is split on whitespace into terms.  Terms of the form key:value
 * are extensions (include:spam, language:en, ...); this relay supports none
 * of them and, as NIP-50 says, ignores them.  A query with no plain terms
 * left constrains nothing.  Live matching is by substring, ASCII
 * case-insensitively, on the event's decoded content; the stored index
 * (SQLite FTS5, unicode61) matches whole words, folding non-ASCII case and
 * accents and ignoring punctuation-only terms.  So the two can differ at
 * the edges: a live event matches on part of a word, a stored one also
 * matches "cafe" for "Café"; a term made only of punctuation selects
 * nothing stored and only content containing it live.
 */
#ifndef COMMON_SEARCH_H
#define COMMON_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

#define SEARCH_MAX_TERMS 16

struct search_terms {
	size_t n;
	char *term[SEARCH_MAX_TERMS]; /* owned, lowercased (ASCII), NUL-terminated */
};

/* Splits query into terms (extensions dropped; more than SEARCH_MAX_TERMS
 * are ignored).  Returns 0 or ERR_NOMEM (nothing to free then). */
int search_parse(const char *query, struct search_terms *out);
/* Frees the terms. */
void search_free(struct search_terms *t);
/* True if every term occurs in content (len bytes). */
bool search_matches(const struct search_terms *t, const char *content, size_t len);
/* Appends an FTS5 MATCH expression requiring every term, each quoted as a
 * string so no query syntax gets through.  Returns 0 or ERR_NOMEM. */
int search_fts_expression(const struct search_terms *t, struct buf *out);

#endif
