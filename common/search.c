/* search.c - NIP-50 query terms (see search.h). */
#include "search.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdint.h>
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

/* ---- live matching with the index's own tokenizer ---- */

/* The FTS5 tokenizer the stored index is built with (unicode61, default
 * options: stored/search_index.c), run on a private in-memory connection.
 * A tokenizer keeps a scratch buffer, so each thread has its own. */
/* The tokens of a text, folded as the index folds them. */
struct search_tokens {
	struct buf text;
	struct { size_t at, len; } *tok;
	size_t n, cap;
};

struct search_words {
	sqlite3 *db;
	fts5_tokenizer api;
	Fts5Tokenizer *tok;
	/* The last content tokenized, kept: the broadcaster matches one event
	 * against every search subscription in turn. */
	struct buf doc_text;
	struct search_tokens doc;
	bool doc_valid;
	struct search_tokens phrase; /* scratch for a term's tokens */
};

static _Thread_local struct search_words *search_tls;

/* fts5_api of db, the documented way: SELECT fts5(?) with a pointer. */
static fts5_api *search_fts5_api(sqlite3 *db)
{
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	return api;
}

static void search_tokens_free(struct search_tokens *t)
{
	buf_free(&t->text);
	free(t->tok);
}

static struct search_words *search_thread_words(void)
{
	struct search_words *w = search_tls;
	fts5_api *api;
	void *user = NULL;

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (sqlite3_open_v2(":memory:", &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) ||
	    !(api = search_fts5_api(w->db)) ||
	    api->xFindTokenizer(api, "unicode61", &user, &w->api) != SQLITE_OK ||
	    w->api.xCreate(user, NULL, 0, &w->tok) != SQLITE_OK) {
		sqlite3_close(w->db);
		free(w);
		return NULL;
	}
	search_tls = w;
	return w;
}

void search_thread_end(void)
{
	struct search_words *w = search_tls;

	if (!w)
		return;
	w->api.xDelete(w->tok);
	sqlite3_close(w->db);
	buf_free(&w->doc_text);
	search_tokens_free(&w->doc);
	search_tokens_free(&w->phrase);
	free(w);
	search_tls = NULL;
}

static int search_take_token(void *ctx, int flags, const char *token, int len, int start, int end)
{
	struct search_tokens *t = ctx;

	(void)flags;
	(void)start;
	(void)end;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 32;
		void *grown = realloc(t->tok, cap * sizeof(*t->tok));

		if (!grown)
			return SQLITE_NOMEM;
		t->tok = grown;
		t->cap = cap;
	}
	t->tok[t->n].at = t->text.len;
	t->tok[t->n].len = (size_t)len;
	if (buf_append(&t->text, token, (size_t)len))
		return SQLITE_NOMEM;
	t->n++;
	return SQLITE_OK;
}

static int search_tokenize(struct search_words *w, int flags, const char *text, size_t len,
			   struct search_tokens *out)
{
	out->n = 0;
	buf_reset(&out->text);
	if (len > INT32_MAX)
		return ERR_TOOBIG;
	return w->api.xTokenize(w->tok, out, flags, text, (int)len, search_take_token) == SQLITE_OK
		       ? 0
		       : ERR_NOMEM;
}

static bool search_same_token(const struct search_tokens *a, size_t i, const struct search_tokens *b,
			      size_t j)
{
	return a->tok[i].len == b->tok[j].len &&
	       memcmp(a->text.data + a->tok[i].at, b->text.data + b->tok[j].at, a->tok[i].len) == 0;
}

/* Whether phrase's tokens occur one after another in doc. */
static bool search_has_phrase(const struct search_tokens *doc, const struct search_tokens *phrase)
{
	for (size_t i = 0; phrase->n <= doc->n && i <= doc->n - phrase->n; i++) {
		size_t j = 0;

		while (j < phrase->n && search_same_token(doc, i + j, phrase, j))
			j++;
		if (j == phrase->n)
			return true;
	}
	return false;
}

/* w->doc: the tokens of content, kept from the last call when it was the
 * same text. */
static int search_doc_tokens(struct search_words *w, const char *content, size_t len)
{
	if (w->doc_valid && w->doc_text.len == len && memcmp(w->doc_text.data, content, len) == 0)
		return 0;
	w->doc_valid = false;
	buf_reset(&w->doc_text);
	if (buf_append(&w->doc_text, content, len) ||
	    search_tokenize(w, FTS5_TOKENIZE_DOCUMENT, content, len, &w->doc))
		return ERR_NOMEM;
	w->doc_valid = true;
	return 0;
}

bool search_matches(const struct search_terms *t, const char *content, size_t len)
{
	struct search_words *w;
	size_t phrases = 0;
	bool hit = true;

	if (t->n == 0)
		return true; /* only extensions, or nothing: constrains nothing */
	if (!content || !(w = search_thread_words()) || search_doc_tokens(w, content, len))
		hit = false;
	/* Each term is a quoted phrase in the index's query
	 * (search_fts_expression()): its tokens, in a row.  A term with no
	 * token (punctuation only) drops out, as FTS5 drops an empty phrase;
	 * if every term does, the query matches nothing. */
	for (size_t i = 0; hit && i < t->n; i++) {
		if (search_tokenize(w, FTS5_TOKENIZE_QUERY, t->term[i], strlen(t->term[i]), &w->phrase)) {
			hit = false;
		} else if (w->phrase.n) {
			phrases++;
			hit = search_has_phrase(&w->doc, &w->phrase);
		}
	}
	return hit && phrases > 0;
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
