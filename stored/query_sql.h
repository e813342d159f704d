/*
 * query_sql.h - turning one filter into one SQL statement.
 *
 * The statement selects (seq, json) of stored events matching the filter
 * with seq <= max_seq, newest first (ties: lowest id), at most limit rows.
 * Each filter field becomes a condition SQLite can serve from an index:
 * ids, authors, kinds and created_at from the events indexes, each #x from
 * the tags index.  Values are bound, never spliced into the text.
 */
#ifndef STORED_QUERY_SQL_H
#define STORED_QUERY_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/filter.h"
#include "stmt_cache.h"

/*
 * Prepares the statement for f on db with its parameters bound.  limit is
 * the effective row limit (already clamped).  Returns 0 with *out set (the
 * caller finalizes it), or ERR_NOMEM / ERR_DB.  f must outlive *out (values
 * are bound without copying).
 */
int query_sql_prepare(sqlite3 *db, const struct filter *f, int64_t max_seq, uint32_t limit,
		      sqlite3_stmt **out);

/* What a statement may see besides the filter. */
struct query_scope {
	int64_t min_seq; /* exclusive; 0 for all (resuming replays after it) */
	int64_t max_seq; /* inclusive: the subscription's registration point */
	int64_t now;     /* events whose expiration is at or before now are left
			    out (NIP-40), whatever is still on disk */
	uint32_t limit;
	bool search;     /* the full-text index exists (NIP-50 enabled) */
	bool by_seq_range; /* read the (min_seq, max_seq] rows by seq, not through
			      the filter's index: for a narrow range (a replay
			      of lost deliveries), where an index on kind or
			      author would walk all of that kind's history */
	/* private_kinds (relayd/private.h): events of these kinds are
	 * selected only if their author or a p-tagged pubkey is one of the
	 * viewers, before the limit; nprivate 0: no such kinds */
	const uint32_t *private_kinds;
	uint32_t nprivate;
	const uint8_t (*viewers)[32];
	uint32_t nviewers;
};

/*
 * The statement for f within scope.  A filter with search terms joins the
 * full-text index and orders by relevance instead of created_at (NIP-50:
 * the limit applies after ranking); with search disabled such a filter
 * selects nothing.  Returns 0 with *out set, or ERR_NOMEM / ERR_DB.
 */
int query_sql_prepare_scoped(sqlite3 *db, const struct filter *f, const struct query_scope *scope,
			     sqlite3_stmt **out);

/*
 * The same statement taken from cache (stmt_cache.h) on db, so a text seen
 * before is bound again instead of prepared.  Returns as above; the caller
 * gives *out back with stmt_cache_release(), never finalizes it.  With a
 * NULL cache this is query_sql_prepare_scoped().
 */
int query_sql_take_scoped(sqlite3 *db, struct stmt_cache *cache, const struct filter *f,
			  const struct query_scope *scope, sqlite3_stmt **out);

/*
 * A statement giving one row, the number of distinct events matching any
 * of the n filters within scope (limit ignored, NIP-45).  Returns 0 with
 * *out set, or ERR_NOMEM / ERR_DB.
 */
int query_sql_prepare_count(sqlite3 *db, const struct filter *filters, uint32_t n,
			    const struct query_scope *scope, sqlite3_stmt **out);

/*
 * A statement deleting (from the writer's connection) every event matching
 * any of the n filters within scope, the same events the count statement
 * counts with the same scope (limit ignored).  Their tags and text go with
 * them (the events_cleanup trigger).  Returns 0 with *out set, or ERR_INVAL
 * (n is 0) / ERR_NOMEM / ERR_DB.
 */
int query_sql_prepare_delete(sqlite3 *db, const struct filter *filters, uint32_t n,
			     const struct query_scope *scope, sqlite3_stmt **out);

/*
 * A statement selecting (seq, json) of the events matching any of the n
 * filters within scope, each once, in seq order, at most scope->limit rows
 * (the filters' own limits are ignored).  With min_seq as a cursor (the last
 * seq of the previous page) it pages through a dump.  Returns 0 with *out
 * set, or ERR_INVAL (n is 0) / ERR_NOMEM / ERR_DB.
 */
int query_sql_prepare_export(sqlite3 *db, const struct filter *filters, uint32_t n,
			     const struct query_scope *scope, sqlite3_stmt **out);

/* A statement selecting (created_at, id) of at most scope->limit events
 * matching f within scope, for a NIP-77 session: the newest ones when f
 * has a limit (as a REQ's history would be), else in no set order.
 * Returns 0 with *out set, or an error. */
int query_sql_prepare_neg(sqlite3 *db, const struct filter *f, const struct query_scope *scope,
			  sqlite3_stmt **out);

/* A statement listing the pubkey of every event matching f within scope
 * (for the NIP-45 HyperLogLog).  Returns 0 with *out set, or an error. */
int query_sql_prepare_pubkeys(sqlite3 *db, const struct filter *f, const struct query_scope *scope,
			      sqlite3_stmt **out);

#endif
