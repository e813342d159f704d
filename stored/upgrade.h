/*
 * upgrade.h - bringing a database written by an older stored up to date.
 *
 * The schema's version is SQLite's user_version.  Versions:
 *   0  every tag value kept as the text the event carried;
 *   1  64-digit lowercase hex tag values packed (tagval.h);
 *   2  the full-text index in search.db, not in this file (search_index.h);
 *   3  the tags in one WITHOUT ROWID table, no seq index (tags_schema.h).
 * A database newer than this stored knows is refused rather than misread.
 */
#ifndef STORED_UPGRADE_H
#define STORED_UPGRADE_H

#include <sqlite3.h>
#include <stdbool.h>

#define UPGRADE_SCHEMA_VERSION 3

/* Rows converted per transaction: each commits on its own, so the WAL of a
 * large database's conversion stays small, and a crash keeps what is done
 * (the conversion of a row is idempotent: a packed value is 33 bytes). */
#define UPGRADE_CHUNK_ROWS 65536

/*
 * Runs on the writer's connection after the schema statements, before
 * anything reads: converts an older database step by step and sets the
 * version.  fresh: the schema statements just created every table, which
 * are current, so only the version is set.  The caller registers
 * tagval_key() on db first (tagval.h).  Returns 0, or ERR_DB (logged; also
 * for a newer version).
 */
int upgrade_schema(sqlite3 *db, bool fresh);

#endif
