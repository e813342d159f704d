/*
 * search.h - NIP-50 search queries: the words to look for.
 *
 * A query is split on whitespace into terms.  Terms of the form key:value
 * are extensions (include:spam, language:en, ...); this relay supports none
 * of them and, as NIP-50 says, ignores them.  A query with no plain terms
 * left constrains nothing.  Each term is a phrase of words: the stored
 * index (SQLite FTS5, unicode61) and live matching split it and the
 * event's decoded content into words with the same tokenizer, folding case
 * and accents and dropping punctuation, so "cafe" finds "Café", "can"
 * finds "can't" but not "pelican", and a live event matches exactly when
 * the same event stored would.  A term of punctuation only drops out; a
 * query of nothing else matches no event.
 *
 * A struct search_terms owns its terms; search_free() frees them.
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

/* Splits query (NUL-terminated) into *out; search_free() frees the terms.
 * Extensions and terms past SEARCH_MAX_TERMS are dropped.  Returns 0, or
 * ERR_NOMEM with nothing to free. */
int search_parse(const char *query, struct search_terms *out);
/* Frees the terms and empties t, which may be reused afterwards. */
void search_free(struct search_terms *t);
/* True if the len bytes at content hold every term's words in a row, as
 * the index's MATCH of search_fts_expression() finds it.  Always true for
 * no terms; false for NULL content or when the tokenizer cannot be made.
 * The calling thread's own tokenizer (an in-memory SQLite connection) is
 * made at its first call; search_thread_end() frees it. */
bool search_matches(const struct search_terms *t, const char *content, size_t len);
/* Frees the calling thread's tokenizer, if it made one.  A thread that
 * called search_matches() calls this before it ends. */
void search_thread_end(void);
/* Appends to out an FTS5 MATCH expression requiring every term.  Each term
 * is quoted as a string, so no query syntax gets through.  Returns 0 or
 * ERR_NOMEM. */
int search_fts_expression(const struct search_terms *t, struct buf *out);

#endif
