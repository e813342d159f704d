/*
 * tags_schema.h - the SQL of the tags table and of the trigger that takes
 * a deleted event's rows out of it, shared by db.c (a new database) and
 * upgrade.c (version 2 to 3).
 *
 * One WITHOUT ROWID B-tree keyed (name, value, created_at, seq): a tag
 * query searches it as it searched the old (name, value, created_at) index,
 * and an insert writes one B-tree instead of three (the rowid table, that
 * index and a seq index).  With no seq index, the trigger finds a deleted
 * event's rows through its own tags: every (name, value) pair its JSON can
 * give, each searched with its created_at and seq.  A pair the event was
 * not indexed under finds nothing, and a row of another event never
 * matches its seq, so a superset of the names and values is exact.
 *
 * The JSON is decoded as event_parse decodes it: each \u0000 becomes
 * JSON_NUL (common/json.h), after each escaped backslash is spelled
 * \u005c so that the text "\\u0000" is left alone.  Values go through
 * tagval_key() (tagval.h), which every connection that deletes events
 * registers (db_open() does, for writers).
 */
#ifndef STORED_TAGS_SCHEMA_H
#define STORED_TAGS_SCHEMA_H

/* The table's columns and key, after "CREATE TABLE [IF NOT EXISTS] name". */
#define TAGS_SCHEMA_COLUMNS                                                                  \
	"(name TEXT NOT NULL, value BLOB NOT NULL, created_at INTEGER NOT NULL,"             \
	" seq INTEGER NOT NULL, PRIMARY KEY(name, value, created_at, seq)) WITHOUT ROWID"

/* old.json with each \u0000 decoded the way event_parse decodes it. */
#define TAGS_SCHEMA_JSON                                                                     \
	"CASE WHEN instr(old.json, '\\u0000') THEN replace(replace(old.json, '\\\\',"        \
	" '\\u005c'), '\\u0000', CAST(x'c080' AS TEXT)) ELSE old.json END"

/* The tags of old.json whose name is one byte (indexed ones among them). */
#define TAGS_SCHEMA_EACH                                                                     \
	" FROM json_each(" TAGS_SCHEMA_JSON ", '$.tags') t"                                   \
	" WHERE length(CAST(t.value ->> 0 AS BLOB)) = 1"

/* The body of the events_cleanup trigger: its DELETE of old's tag rows. */
#define TAGS_SCHEMA_CLEANUP                                                                  \
	" DELETE FROM tags WHERE name IN (SELECT t.value ->> 0" TAGS_SCHEMA_EACH ")"          \
	" AND value IN (SELECT tagval_key(coalesce(t.value ->> 1, ''))" TAGS_SCHEMA_EACH ")" \
	" AND created_at = old.created_at AND seq = old.seq;"

/* The trigger, after "CREATE TRIGGER [IF NOT EXISTS] ". */
#define TAGS_SCHEMA_TRIGGER                                                                  \
	"events_cleanup AFTER DELETE ON events BEGIN" TAGS_SCHEMA_CLEANUP " END;"

#endif
