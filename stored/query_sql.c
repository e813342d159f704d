/* query_sql.c - SQL for one filter (see query_sql.h). */
#include "query_sql.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/buf.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../common/search.h"
#include "tagval.h"

/* BIND_TAG_VALUE: a tag value as a filter names it, bound in its kept form
 * (tagval.h); BIND_KEY_VALUE: a 32-byte key (a pubkey) as a tag value
 * naming it is kept (packed). */
enum bind_type { BIND_INT, BIND_BLOB, BIND_TEXT, BIND_TAG_VALUE, BIND_KEY_VALUE };

struct bind {
	enum bind_type type;
	int64_t value;
	const void *ptr;
	int len;
};

/* The statement text and its parameters, built side by side so the n-th
 * `?` always meets the n-th bind. */
struct sql_builder {
	struct buf text;
	struct bind *binds;
	size_t nbinds, cap;
	int failed;
	struct buf fts; /* the current filter's search expression, bound by pointer */
};

static void sb_text(struct sql_builder *sb, const char *s)
{
	if (buf_append_str(&sb->text, s))
		sb->failed = 1;
}

static void sb_bind(struct sql_builder *sb, enum bind_type type, int64_t v, const void *p, int len)
{
	if (sb->nbinds == sb->cap) {
		size_t cap = sb->cap ? sb->cap * 2 : 16;
		struct bind *grown = realloc(sb->binds, cap * sizeof(*grown));

		if (!grown) {
			sb->failed = 1;
			return;
		}
		sb->binds = grown;
		sb->cap = cap;
	}
	sb->binds[sb->nbinds++] = (struct bind){ type, v, p, len };
	sb_text(sb, "?");
}

/* Appends " AND column IN (?,?,...)" over n blobs of size bytes each. */
static void sb_in_blobs(struct sql_builder *sb, const char *column, const uint8_t *vals,
			uint32_t n, int size)
{
	sb_text(sb, " AND ");
	sb_text(sb, column);
	sb_text(sb, " IN (");
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			sb_text(sb, ",");
		sb_bind(sb, BIND_BLOB, 0, vals + (size_t)i * (size_t)size, size);
	}
	sb_text(sb, ")");
}

static void sb_kinds(struct sql_builder *sb, const struct filter *f)
{
	sb_text(sb, " AND kind IN (");
	for (uint32_t i = 0; i < f->nkinds; i++) {
		if (i)
			sb_text(sb, ",");
		sb_bind(sb, BIND_INT, f->kinds[i], NULL, 0);
	}
	sb_text(sb, ")");
}

/* "<tags>name = ? AND <tags>value IN (?,...)": one tag condition on the rows
 * of the tags table, named by tags ("" inside a subquery, "tags." in a join). */
static void sb_tag_rows(struct sql_builder *sb, const char *tags, const struct filter_tag *t,
			const char *name)
{
	sb_text(sb, tags);
	sb_text(sb, "name = ");
	sb_bind(sb, BIND_TEXT, 0, name, 1);
	sb_text(sb, " AND ");
	sb_text(sb, tags);
	sb_text(sb, "value IN (");
	for (uint32_t i = 0; i < t->nvalues; i++) {
		if (i)
			sb_text(sb, ",");
		sb_bind(sb, BIND_TAG_VALUE, 0, t->values[i], (int)t->lens[i]);
	}
	sb_text(sb, ")");
}

static void sb_tag(struct sql_builder *sb, const struct filter_tag *t, const char *name)
{
	sb_text(sb, " AND events.seq IN (SELECT seq FROM tags WHERE ");
	sb_tag_rows(sb, "", t, name);
	sb_text(sb, ")");
}

/* The driving tag condition of a join (see sb_drive_tag). */
static void sb_tag_driving(struct sql_builder *sb, const struct filter_tag *t, const char *name)
{
	sb_text(sb, " AND ");
	sb_tag_rows(sb, "tags.", t, name);
}

/* The letters of the tag conditions, which must outlive the statement. */
static const char tag_letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

static const char *tag_letter(char c)
{
	for (const char *p = tag_letters; *p; p++)
		if (*p == c)
			return p;
	return "?";
}

/* What the SELECT returns, and so how it is ordered and limited. */
enum sb_shape {
	SHAPE_ROWS,    /* seq, json; ordered, limited */
	SHAPE_SEQS,    /* seq only, unordered (a COUNT part) */
	SHAPE_PUBKEYS, /* pubkey only, unordered (a HyperLogLog) */
	SHAPE_EXPORT,  /* seq, json; in seq order, limited */
	SHAPE_NEG,     /* created_at, id; newest first only under a filter limit */
};

/* The conditions every shape shares.  When the rows are driven by one tag
 * condition (drive_tag >= 0, see sb_drive_tag), that condition is the join's
 * and the time range applies to the tag rows, whose index covers it. */
/* " AND (kind NOT IN (private) OR pubkey IN (viewers) OR it names a viewer
 * in a p tag)": the private events a subscription may read, selected in
 * SQL so that a limit counts only those (relayd still checks each). */
static void sb_private(struct sql_builder *sb, const struct query_scope *scope)
{
	sb_text(sb, " AND (events.kind NOT IN (");
	for (uint32_t i = 0; i < scope->nprivate; i++) {
		if (i)
			sb_text(sb, ",");
		sb_bind(sb, BIND_INT, scope->private_kinds[i], NULL, 0);
	}
	sb_text(sb, ")");
	if (scope->nviewers) {
		sb_text(sb, " OR events.pubkey IN (");
		for (uint32_t i = 0; i < scope->nviewers; i++) {
			if (i)
				sb_text(sb, ",");
			sb_bind(sb, BIND_BLOB, 0, scope->viewers[i], 32);
		}
		sb_text(sb, ") OR events.seq IN (SELECT seq FROM tags WHERE name = 'p' AND value IN (");
		for (uint32_t i = 0; i < scope->nviewers; i++) {
			if (i)
				sb_text(sb, ",");
			sb_bind(sb, BIND_KEY_VALUE, 0, scope->viewers[i], 32);
		}
		sb_text(sb, "))");
	}
	sb_text(sb, ")");
}

static void sb_conditions(struct sql_builder *sb, const struct filter *f,
			  const struct query_scope *scope, int drive_tag)
{
	const char *created_at = drive_tag >= 0 ? "tags.created_at" : "created_at";

	sb_text(sb, " WHERE events.seq <= ");
	sb_bind(sb, BIND_INT, scope->max_seq, NULL, 0);
	if (scope->min_seq > 0) {
		sb_text(sb, " AND events.seq > ");
		sb_bind(sb, BIND_INT, scope->min_seq, NULL, 0);
	}
	sb_text(sb, " AND (expires_at IS NULL OR expires_at > ");
	sb_bind(sb, BIND_INT, scope->now, NULL, 0);
	sb_text(sb, ")");
	if (scope->nprivate)
		sb_private(sb, scope);
	if (f->has_ids)
		sb_in_blobs(sb, "id", (const uint8_t *)f->ids, f->nids, 32);
	if (f->has_authors)
		sb_in_blobs(sb, "pubkey", (const uint8_t *)f->authors, f->nauthors, 32);
	if (f->has_kinds)
		sb_kinds(sb, f);
	if (f->since != INT64_MIN) {
		sb_text(sb, " AND ");
		sb_text(sb, created_at);
		sb_text(sb, " >= ");
		sb_bind(sb, BIND_INT, f->since, NULL, 0);
	}
	if (f->until != INT64_MAX) {
		sb_text(sb, " AND ");
		sb_text(sb, created_at);
		sb_text(sb, " <= ");
		sb_bind(sb, BIND_INT, f->until, NULL, 0);
	}
	for (uint32_t i = 0; i < f->ntags; i++) {
		if ((int)i == drive_tag)
			sb_tag_driving(sb, &f->tags[i], tag_letter(f->tags[i].name));
		else
			sb_tag(sb, &f->tags[i], tag_letter(f->tags[i].name));
	}
}

/*
 * Which tag condition should drive an ordered, limited query, or -1.
 *
 * "seq IN (SELECT seq FROM tags ...)" makes SQLite fetch every event carrying
 * the tag and sort them all before the limit: for a popular #p or #e that is
 * thousands of rows to return fifty.  Walking the tag's index entries
 * (name, value, created_at) newest first and joining each to its event stops
 * at the limit instead.  Only without ids or authors, whose own indexes are
 * narrower; the condition with the fewest values is chosen, since with one
 * value the index order is the answer's order.
 */
static int sb_drive_tag(const struct filter *f)
{
	int best = -1;

	if (f->has_ids || f->has_authors)
		return -1;
	for (uint32_t i = 0; i < f->ntags; i++)
		if (best < 0 || f->tags[i].nvalues < f->tags[best].nvalues)
			best = (int)i;
	return best;
}

static const char *const sb_columns[] = {
	[SHAPE_ROWS] = "SELECT seq, json FROM events",
	[SHAPE_SEQS] = "SELECT seq FROM events",
	[SHAPE_PUBKEYS] = "SELECT pubkey FROM events",
	[SHAPE_EXPORT] = "SELECT seq, json FROM events",
	[SHAPE_NEG] = "SELECT created_at, id FROM events",
};

/* The FTS5 expression for f's search, or "" when it has no plain terms. */
static void sb_search_expression(struct sql_builder *sb, const struct filter *f)
{
	struct search_terms terms;

	if (!f->search)
		return;
	if (search_parse(f->search, &terms) || search_fts_expression(&terms, &sb->fts))
		sb->failed = 1;
	search_free(&terms);
}

static void sb_filter(struct sql_builder *sb, const struct filter *f,
		      const struct query_scope *scope, enum sb_shape shape)
{
	int searching, drive_tag = -1;
	/* With NIP-50 off there is no index to search: a filter with a search
	 * matches nothing, and the others in its request are still answered. */
	bool unsearchable = f->search && !scope->search;

	if (!unsearchable)
		sb_search_expression(sb, f);
	searching = sb->fts.len > 0;
	if (shape == SHAPE_ROWS && !searching && !scope->by_seq_range)
		drive_tag = sb_drive_tag(f);
	if (shape == SHAPE_ROWS && !searching && scope->by_seq_range) {
		/* NOT INDEXED still lets SQLite read a seq (rowid) range. */
		sb_text(sb, "SELECT seq, json FROM events NOT INDEXED");
	} else if (drive_tag >= 0) {
		/* An event may carry the tag twice (or two of its values):
		 * DISTINCT keeps it one row, so the limit counts events. */
		sb_text(sb, "SELECT DISTINCT events.seq, events.json FROM tags"
			    " CROSS JOIN events ON events.seq = tags.seq");
	} else {
		sb_text(sb, sb_columns[shape]);
	}
	if (searching)
		sb_text(sb, " JOIN events_fts ON events_fts.rowid = events.seq");
	sb_conditions(sb, f, scope, drive_tag);
	if (unsearchable)
		sb_text(sb, " AND 0");
	if (searching) {
		sb_text(sb, " AND events_fts MATCH ");
		sb_bind(sb, BIND_TEXT, 0, sb->fts.data, (int)sb->fts.len);
	}
	if (shape != SHAPE_ROWS && shape != SHAPE_EXPORT && shape != SHAPE_NEG)
		return;
	if (shape == SHAPE_EXPORT)
		sb_text(sb, " ORDER BY seq");
	else if (searching)
		sb_text(sb, " ORDER BY events_fts.rank");
	else if (drive_tag >= 0)
		sb_text(sb, " ORDER BY tags.created_at DESC, events.id ASC");
	else if (shape != SHAPE_NEG || f->has_limit) /* else any order: the caller sorts */
		sb_text(sb, " ORDER BY created_at DESC, id ASC");
	sb_text(sb, " LIMIT ");
	sb_bind(sb, BIND_INT, scope->limit, NULL, 0);
}

static void sb_apply(const struct sql_builder *sb, sqlite3_stmt *st)
{
	for (size_t i = 0; i < sb->nbinds; i++) {
		const struct bind *b = &sb->binds[i];
		int at = (int)i + 1;

		if (b->type == BIND_INT)
			sqlite3_bind_int64(st, at, b->value);
		else if (b->type == BIND_BLOB)
			sqlite3_bind_blob(st, at, b->ptr, b->len, SQLITE_STATIC);
		else if (b->type == BIND_TAG_VALUE)
			tagval_bind(st, at, b->ptr, (size_t)b->len);
		else if (b->type == BIND_KEY_VALUE)
			tagval_bind_key(st, at, b->ptr);
		else
			sqlite3_bind_text(st, at, b->ptr, b->len, SQLITE_TRANSIENT);
	}
}

/* Prepares what sb holds, or takes it from cache when there is one, and
 * binds it (text values are copied by SQLite); frees sb's buffers except
 * fts, which sb_release() frees. */
static int sb_prepare_in(sqlite3 *db, struct stmt_cache *cache, struct sql_builder *sb,
			 sqlite3_stmt **out)
{
	int rc = 0;

	if (sb->failed) {
		rc = ERR_NOMEM;
	} else if (cache ? stmt_cache_take(cache, sb->text.data, sb->text.len, out) != 0
			 : sqlite3_prepare_v2(db, sb->text.data, (int)sb->text.len, out, NULL) !=
				   SQLITE_OK) {
		log_warnx("query prepare: %s", sqlite3_errmsg(db));
		rc = ERR_DB;
	} else {
		sb_apply(sb, *out);
	}
	buf_free(&sb->text);
	free(sb->binds);
	return rc;
}

static int sb_prepare(sqlite3 *db, struct sql_builder *sb, sqlite3_stmt **out)
{
	return sb_prepare_in(db, NULL, sb, out);
}

static void sb_release(struct sql_builder *sb)
{
	buf_free(&sb->fts);
}

int query_sql_take_scoped(sqlite3 *db, struct stmt_cache *cache, const struct filter *f,
			  const struct query_scope *scope, sqlite3_stmt **out)
{
	struct sql_builder sb = { 0 };
	int rc;

	sb_filter(&sb, f, scope, SHAPE_ROWS);
	rc = sb_prepare_in(db, cache, &sb, out);
	sb_release(&sb);
	return rc;
}

int query_sql_prepare_scoped(sqlite3 *db, const struct filter *f, const struct query_scope *scope,
			     sqlite3_stmt **out)
{
	return query_sql_take_scoped(db, NULL, f, scope, out);
}

int query_sql_prepare(sqlite3 *db, const struct filter *f, int64_t max_seq, uint32_t limit,
		      sqlite3_stmt **out)
{
	struct query_scope scope = { 0, max_seq, (int64_t)time(NULL), limit, true, false,
				     NULL, 0, NULL, 0 };

	return query_sql_prepare_scoped(db, f, &scope, out);
}

int query_sql_prepare_neg(sqlite3 *db, const struct filter *f, const struct query_scope *scope,
			  sqlite3_stmt **out)
{
	struct sql_builder sb = { 0 };
	int rc;

	sb_filter(&sb, f, scope, SHAPE_NEG);
	rc = sb_prepare(db, &sb, out);
	sb_release(&sb);
	return rc;
}

int query_sql_prepare_pubkeys(sqlite3 *db, const struct filter *f, const struct query_scope *scope,
			      sqlite3_stmt **out)
{
	struct sql_builder sb = { 0 };
	int rc;

	sb_filter(&sb, f, scope, SHAPE_PUBKEYS);
	rc = sb_prepare(db, &sb, out);
	sb_release(&sb);
	return rc;
}

/* SQLite refuses a compound SELECT of more than 500 terms (Debian builds it
 * with SQLITE_MAX_COMPOUND_SELECT at its default), and max_filters goes up
 * to 1000: past this many filters, each run of this many is a subquery of
 * its own, and the UNION joins those. */
#define UNION_TERMS_MAX 250

/* head, the UNION of each filter's seqs (an event matching two filters
 * appears once), tail, then limit bound when limited; prepared. */
static int sb_prepare_union(sqlite3 *db, const char *head, const struct filter *filters,
			    uint32_t n, const struct query_scope *scope, const char *tail,
			    bool limited, sqlite3_stmt **out)
{
	struct sql_builder sb = { 0 };
	struct buf *fts;
	int rc;

	if (n == 0)
		return ERR_INVAL;
	fts = calloc(n, sizeof(*fts));
	if (!fts)
		return ERR_NOMEM;
	sb_text(&sb, head);
	for (uint32_t i = 0; i < n; i++) {
		if (n > UNION_TERMS_MAX && i % UNION_TERMS_MAX == 0)
			sb_text(&sb, i ? ") UNION SELECT seq FROM (" : "SELECT seq FROM (");
		else if (i)
			sb_text(&sb, " UNION ");
		sb_filter(&sb, &filters[i], scope, SHAPE_SEQS);
		fts[i] = sb.fts; /* each part's expression lives until it is bound */
		memset(&sb.fts, 0, sizeof(sb.fts));
	}
	if (n > UNION_TERMS_MAX)
		sb_text(&sb, ")");
	sb_text(&sb, tail);
	if (limited)
		sb_bind(&sb, BIND_INT, scope->limit, NULL, 0);
	rc = sb_prepare(db, &sb, out);
	for (uint32_t i = 0; i < n; i++)
		buf_free(&fts[i]);
	free(fts);
	return rc;
}

int query_sql_prepare_count(sqlite3 *db, const struct filter *filters, uint32_t n,
			    const struct query_scope *scope, sqlite3_stmt **out)
{
	return sb_prepare_union(db, "SELECT count(*) FROM (", filters, n, scope, ")", false, out);
}

int query_sql_prepare_delete(sqlite3 *db, const struct filter *filters, uint32_t n,
			     const struct query_scope *scope, sqlite3_stmt **out)
{
	return sb_prepare_union(db, "DELETE FROM events WHERE seq IN (", filters, n, scope, ")",
				false, out);
}

/* One filter selects in seq order straight from its conditions, so a page
 * walks the rowid (or an index) from the cursor on; several go through the
 * UNION of their seqs. */
int query_sql_prepare_export(sqlite3 *db, const struct filter *filters, uint32_t n,
			     const struct query_scope *scope, sqlite3_stmt **out)
{
	struct sql_builder sb = { 0 };
	int rc;

	if (n != 1)
		return sb_prepare_union(db, "SELECT seq, json FROM events WHERE seq IN (", filters,
					n, scope, ") ORDER BY seq LIMIT ", true, out);
	sb_filter(&sb, &filters[0], scope, SHAPE_EXPORT);
	rc = sb_prepare(db, &sb, out);
	sb_release(&sb);
	return rc;
}
