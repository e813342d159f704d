/*
 * stmt_cache.h - prepared statements kept for reuse, keyed by their text.
 *
 * A query thread writes the SQL of each filter anew (query_sql.h), but
 * clients ask the same shapes over and over: one author with a limit, a
 * kind, an #e.  The text repeats and only the bound values change.
 * Preparing is a parse and a plan each time; a kept statement is only
 * bound again.  One cache per database connection, used by one thread; when
 * it is full the least recently used statement is finalized.
 */
#ifndef STORED_STMT_CACHE_H
#define STORED_STMT_CACHE_H

#include <sqlite3.h>
#include <stddef.h>

struct stmt_cache;

/* A cache of at most capacity statements on db (which must outlive it), or
 * NULL without memory. */
struct stmt_cache *stmt_cache_new(sqlite3 *db, size_t capacity);
/* Finalizes every kept statement and frees the cache.  NULL-safe.  No
 * statement may be out (taken and not released). */
void stmt_cache_free(struct stmt_cache *c);

/*
 * A statement for the len bytes of sql, with no values bound: a kept one if
 * the same text was prepared before, else a new one.  Returns 0 with *out
 * set, or ERR_DB (the prepare failed: sqlite3_errmsg() of the connection
 * says why).  The statement is the caller's until stmt_cache_release().
 */
int stmt_cache_take(struct stmt_cache *c, const char *sql, size_t len, sqlite3_stmt **out);

/*
 * Gives back a statement from stmt_cache_take(): it is reset (ending any
 * read it holds) and its bindings cleared (so no pointer into the caller's
 * memory stays behind), then kept for the next take of its text.  NULL is
 * ignored.
 */
void stmt_cache_release(struct stmt_cache *c, sqlite3_stmt *st);

/* Statements prepared so far, for tests and metrics: a take that reused a
 * kept statement does not count. */
size_t stmt_cache_prepared(const struct stmt_cache *c);

#endif
