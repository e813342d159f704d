/*
 * test_search.c - checks common/search.c, the NIP-50 query terms.
 *
 * search_parse(): whitespace splits terms (any run of space, tab, CR, LF,
 * FF, VT); key:value terms are extensions and are dropped; terms are
 * lowercased (ASCII); at most SEARCH_MAX_TERMS are kept.
 * search_matches(): every term's words must occur in a row in the content,
 * as the index's MATCH finds them; checked case by case and against a real
 * FTS5 table over every row and query below (live and stored matching must
 * agree exactly).
 * search_fts_expression(): every term becomes one FTS5 string, so nothing
 * the client typed is read as query syntax.  That is checked by running
 * the expression with MATCH against an in-memory FTS5 table (unicode61,
 * as stored/db.c creates it) whose rows contain the operator words and
 * characters themselves: an operator that got through would either make
 * MATCH fail or select different rows than "all these words".
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../common/search.h"
#include "../support/suite.h"

/* The parsed terms joined by '|', e.g. "hello|world". */
static const char *parsed(const char *query)
{
	static char out[2048];
	struct search_terms t;
	size_t len = 0;

	ck_assert_int_eq(search_parse(query, &t), 0);
	out[0] = '\0';
	for (size_t i = 0; i < t.n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? "|" : "",
					t.term[i]);
	search_free(&t);
	ck_assert_uint_eq(t.n, 0);
	return out;
}

/* {query, terms joined by '|'} */
static const struct {
	const char *query;
	const char *terms;
} parse_cases[] = {
	{ "", "" },
	{ "   ", "" },
	{ "\t\r\n\f\v ", "" },
	{ "hello", "hello" },
	{ "hello world", "hello|world" },
	{ "  hello   world  ", "hello|world" },
	{ "a\tb\nc\rd\fe\vf", "a|b|c|d|e|f" },
	{ "Hello WORLD", "hello|world" },
	{ "NoStR", "nostr" },
	/* extensions are key:value with a key and a value */
	{ "include:spam", "" },
	{ "best nostr apps include:spam language:en", "best|nostr|apps" },
	{ "domain:example.com sentiment:positive nsfw:false", "" },
	{ "a:b:c", "" },
	/* a colon without a key or without a value is no extension */
	{ ":x", ":x" },
	{ "x:", "x:" },
	{ ":", ":" },
	/* quotes and operators are ordinary characters here */
	{ "\"quoted phrase\"", "\"quoted|phrase\"" },
	{ "apple OR banana", "apple|or|banana" },
	{ "-minus star* (paren) ^caret a+b NEAR", "-minus|star*|(paren)|^caret|a+b|near" },
	/* non-ASCII bytes are kept as they are */
	{ "caf\xc3\xa9 \xc3\x89T\xc3\x89", "caf\xc3\xa9|\xc3\x89t\xc3\x89" },
};

START_TEST(test_parse)
{
	ck_assert_str_eq(parsed(parse_cases[_i].query), parse_cases[_i].terms);
}
END_TEST

/* More than SEARCH_MAX_TERMS: the first ones are kept, the rest ignored. */
START_TEST(test_parse_max_terms)
{
	char query[1024], want[1024];
	size_t q = 0, w = 0;

	for (int i = 0; i < SEARCH_MAX_TERMS + 5; i++) {
		q += (size_t)snprintf(query + q, sizeof(query) - q, "%sT%d", i ? " " : "", i);
		if (i < SEARCH_MAX_TERMS)
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%st%d", i ? "|" : "", i);
	}
	ck_assert_str_eq(parsed(query), want);
}
END_TEST

/* Extensions do not use up the term budget... up to a point: exactly
 * SEARCH_MAX_TERMS plain terms survive whatever extensions come between. */
START_TEST(test_parse_extensions_between)
{
	char query[2048], want[1024];
	size_t q = 0, w = 0;

	for (int i = 0; i < SEARCH_MAX_TERMS; i++) {
		q += (size_t)snprintf(query + q, sizeof(query) - q, "k%d:v w%d ", i, i);
		w += (size_t)snprintf(want + w, sizeof(want) - w, "%sw%d", i ? "|" : "", i);
	}
	ck_assert_str_eq(parsed(query), want);
}
END_TEST

static bool matches(const char *query, const char *content)
{
	struct search_terms t;
	bool hit;

	ck_assert_int_eq(search_parse(query, &t), 0);
	hit = search_matches(&t, content, content ? strlen(content) : 0);
	search_free(&t);
	return hit;
}

START_TEST(test_matches)
{
	ck_assert(matches("hello", "hello"));
	ck_assert(matches("hello", "Say HELLO to nostr"));
	ck_assert(matches("HELLO", "say hello"));
	ck_assert(matches("hElLo WoRlD", "WORLD, hello!"));
	ck_assert(!matches("hello world", "hello there"));
	ck_assert(!matches("hello", "help"));
	/* whole words: no part of one */
	ck_assert(!matches("zeb", "zebra crossing"));
	ck_assert(!matches("can", "pelican"));
	ck_assert(matches("can", "can't stop"));
	/* a term is a phrase: its words in a row */
	ck_assert(matches("can't", "I can't stop"));
	ck_assert(!matches("can't", "can you? t"));
	/* punctuation is no part of a word */
	ck_assert(matches("hello,", "hello world"));
	ck_assert(!matches("hello", ""));
	ck_assert(!matches("hello", NULL));
	/* no terms constrain nothing */
	ck_assert(matches("", "anything"));
	ck_assert(matches("include:spam", "anything"));
	ck_assert(matches("   ", ""));
	/* extensions are not looked for in the content */
	ck_assert(matches("nostr include:spam", "nostr"));
	/* case and accents fold beyond ASCII */
	ck_assert(matches("CAF\xc3\xa9", "un caf\xc3\xa9"));
	ck_assert(matches("cafe", "UN CAF\xc3\x89"));
	ck_assert(matches("\xc3\x89" "cole", "ecole primaire"));
	ck_assert(matches("\"quoted\"", "a \"Quoted\" word"));
	ck_assert(matches("\"quoted\"", "a quoted word"));
	/* a term of punctuation only drops out, and alone matches nothing */
	ck_assert(matches(", hello", "hello"));
	ck_assert(!matches(",", "a, b"));
	ck_assert(!matches("!!! ...", "!!! ..."));
}
END_TEST

/* The tokens of the last content are kept for the next call with the same
 * text: a buffer changed in place between calls is read again. */
START_TEST(test_matches_same_buffer_changed)
{
	char text[] = "hello world";
	struct search_terms t;

	ck_assert_int_eq(search_parse("hello", &t), 0);
	ck_assert(search_matches(&t, text, strlen(text)));
	ck_assert(search_matches(&t, text, strlen(text)));
	text[0] = 'j';
	ck_assert(!search_matches(&t, text, strlen(text)));
	text[0] = 'h';
	ck_assert(search_matches(&t, text, strlen(text)));
	ck_assert(!search_matches(&t, text, 4)); /* "hell" */
	search_free(&t);
	search_thread_end();
}
END_TEST

/* Matching looks only at the given length (content need not end in NUL). */
START_TEST(test_matches_length)
{
	struct search_terms t;

	ck_assert_int_eq(search_parse("world", &t), 0);
	ck_assert(search_matches(&t, "hello world", 11));
	ck_assert(!search_matches(&t, "hello world", 10));
	ck_assert(!search_matches(&t, "hello worl", 10));
	search_free(&t);
}
END_TEST

static const char *expression(const char *query)
{
	static char out[2048];
	struct search_terms t;
	struct buf b = BUF_INIT;

	ck_assert_int_eq(search_parse(query, &t), 0);
	ck_assert_int_eq(search_fts_expression(&t, &b), 0);
	snprintf(out, sizeof(out), "%s", b.data ? b.data : "");
	buf_free(&b);
	search_free(&t);
	return out;
}

START_TEST(test_expression_text)
{
	ck_assert_str_eq(expression(""), "");
	ck_assert_str_eq(expression("include:spam"), "");
	ck_assert_str_eq(expression("hello"), "\"hello\"");
	ck_assert_str_eq(expression("Hello  World"), "\"hello\" \"world\"");
	ck_assert_str_eq(expression("a\"b"), "\"a\"\"b\"");
	ck_assert_str_eq(expression("\""), "\"\"\"\"");
	ck_assert_str_eq(expression("\"\"x"), "\"\"\"\"\"x\"");
	ck_assert_str_eq(expression("OR"), "\"or\"");
}
END_TEST

/* ------------------------------------------------------ FTS5 behaviour */

static sqlite3 *fts;

/* Rows, numbered from 1, for the MATCH checks. */
static const char *const rows[] = {
	"apple or banana",          /* 1 */
	"apple",                    /* 2 */
	"banana",                   /* 3 */
	"apple not banana",         /* 4 */
	"apple and banana",         /* 5 */
	"apples and bananas",       /* 6 */
	"near apple banana",        /* 7 */
	"content apple",            /* 8 */
	"the quote \" apple",       /* 9 */
	"Hello World",              /* 10 */
	"zebra crossing",           /* 11 */
	"can't stop",               /* 12 */
	"pelican",                  /* 13 */
	"\xc3\x89" "cole primaire",      /* 14: École */
	"n\xc3\xbamero uno",           /* 15: número */
	"a, b; c. d",               /* 16 */
};

static void fts_open(void)
{
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_open(":memory:", &fts), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(fts,
				      "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(fts, "INSERT INTO t(rowid, content) VALUES(?1, ?2)", -1,
					    &st, NULL),
			 SQLITE_OK);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(st, 2, rows[i], -1, SQLITE_STATIC);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
}

static void fts_close(void)
{
	sqlite3_close(fts);
	search_thread_end();
}

/* The rowids the query's expression selects, as "1 4 5", or "error: ..."
 * when MATCH refuses it. */
static const char *selected(const char *query)
{
	static char out[256];
	const char *expr = expression(query);
	sqlite3_stmt *st;
	size_t len = 0;
	int rc;

	ck_assert_int_eq(sqlite3_prepare_v2(fts, "SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, expr, -1, SQLITE_TRANSIENT);
	out[0] = '\0';
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%lld", len ? " " : "",
					(long long)sqlite3_column_int64(st, 0));
	if (rc != SQLITE_DONE)
		snprintf(out, sizeof(out), "error: %s (expression %s)", sqlite3_errmsg(fts), expr);
	sqlite3_finalize(st);
	return out;
}

/* {query, rows selected}: every case is "the rows containing all these
 * words", which an operator that got through would change. */
static const struct {
	const char *query;
	const char *rows;
} fts_cases[] = {
	{ "apple", "1 2 4 5 7 8 9" },
	{ "APPLE banana", "1 4 5 7" },
	/* OR would add rows 2 and 3; as a word it needs "or" */
	{ "apple OR banana", "1" },
	{ "apple or banana", "1" },
	/* NOT would exclude rows; as a word it needs "not" */
	{ "apple NOT banana", "4" },
	/* AND as a word */
	{ "apple AND banana", "5" },
	/* NEAR(...) as words */
	{ "NEAR(apple banana)", "7" },
	{ "NEAR", "7" },
	/* a leading '-' is no negation; the word is still required */
	{ "apple -banana", "1 4 5 7" },
	/* '*' is no prefix query: "appl*" finds no word "appl" */
	{ "appl*", "" },
	{ "apple*", "1 2 4 5 7 8 9" },
	/* "content:" is no column filter (and "content:x" is an extension) */
	{ "content: apple", "8" },
	/* '^' is no start-of-column anchor */
	{ "^apple", "1 2 4 5 7 8 9" },
	/* '+' joins nothing by itself: the term is one string, which FTS5
	 * tokenizes into the phrase "apple banana" (adjacent words) */
	{ "apple+banana", "7" },
	/* parentheses are no grouping */
	{ "(apple OR banana)", "1" },
	/* quotes cannot close the string early */
	{ "\"apple\" OR \"banana\"", "1" },
	{ "\" apple", "1 2 4 5 7 8 9" },
	{ "quote\"", "9" },
	/* case folds as unicode61 does */
	{ "hello WORLD", "10" },
	{ "hello world*", "10" },
};

/* Queries beyond fts_cases for the live-against-stored check. */
static const char *const more_queries[] = {
	"zeb", "can", "can't", "t", "ecole", "\xc3\x89" "COLE", "numero", "hello,", ",", ", hello",
	"a b", "b a", "a, b", "stop can't", "uno n\xc3\xbamero", "",
};

/* Live matching (search_matches) selects exactly the rows the index's
 * MATCH selects, for every query here and every row. */
START_TEST(test_live_matches_as_the_index)
{
	size_t ncases = sizeof(fts_cases) / sizeof(fts_cases[0]);
	const char *query = (size_t)_i < ncases ? fts_cases[_i].query : more_queries[(size_t)_i - ncases];
	char live[256];
	size_t len = 0;

	live[0] = '\0';
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		if (matches(query, rows[r]))
			len += (size_t)snprintf(live + len, sizeof(live) - len, "%s%zu", len ? " " : "", r + 1);
	if (*query == '\0' || !strcmp(query, ","))
		; /* "" is no MATCH at all (constrains nothing): see below */
	else
		ck_assert_msg(strcmp(live, selected(query)) == 0,
			      "search \"%s\": live matched rows \"%s\", the index \"%s\"", query, live,
			      selected(query));
	if (*query == '\0')
		ck_assert_str_eq(live, "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16");
	if (!strcmp(query, ","))
		ck_assert_msg(live[0] == '\0' && selected(query)[0] == '\0', "\",\": live \"%s\", index \"%s\"",
			      live, selected(query));
}
END_TEST

START_TEST(test_fts_no_syntax_gets_through)
{
	ck_assert_msg(strcmp(selected(fts_cases[_i].query), fts_cases[_i].rows) == 0,
		      "search \"%s\" (expression %s) selected \"%s\", want \"%s\"", fts_cases[_i].query,
		      expression(fts_cases[_i].query), selected(fts_cases[_i].query),
		      fts_cases[_i].rows);
}
END_TEST

static Suite *search_suite(void)
{
	Suite *s = suite_create("search");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_parse, 0, (int)(sizeof(parse_cases) / sizeof(parse_cases[0])));
	tcase_add_test(tc, test_parse_max_terms);
	tcase_add_test(tc, test_parse_extensions_between);
	suite_add_tcase(s, tc);
	tc = tcase_create("matches");
	tcase_add_test(tc, test_matches);
	tcase_add_test(tc, test_matches_length);
	tcase_add_test(tc, test_matches_same_buffer_changed);
	suite_add_tcase(s, tc);
	tc = tcase_create("fts");
	tcase_add_checked_fixture(tc, fts_open, fts_close);
	tcase_add_test(tc, test_expression_text);
	tcase_add_loop_test(tc, test_fts_no_syntax_gets_through, 0,
			    (int)(sizeof(fts_cases) / sizeof(fts_cases[0])));
	tcase_add_loop_test(tc, test_live_matches_as_the_index, 0,
			    (int)(sizeof(fts_cases) / sizeof(fts_cases[0]) +
				  sizeof(more_queries) / sizeof(more_queries[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(search_suite());
}
