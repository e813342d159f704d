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
#include <stdint.h>

#include "../common/filter.h"

/*
 * Prepares the statement for f on db with its parameters bound.  limit is
 * the effective row limit (already clamped).  Returns 0 with *out set (the
 * caller finalizes it), or ERR_NOMEM / ERR_DB.  f must outlive *out (values
 * are bound without copying).
 */
int query_sql_prepare(sqlite3 *db, const struct filter *f, int64_t max_seq, uint32_t limit,
		      sqlite3_stmt **out);

/* The same, restricted to min_seq < seq <= max_seq (resuming a live
 * subscription replays only what was committed after min_seq). */
int query_sql_prepare_range(sqlite3 *db, const struct filter *f, int64_t min_seq, int64_t max_seq,
			    uint32_t limit, sqlite3_stmt **out);

#endif
