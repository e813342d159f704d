/*
 * upgrade.h - bringing a database written by an older stored up to date.
 *
 * The schema's version is SQLite's user_version.  Versions:
 *   0  every tag value kept as the text the event carried;
 *   1  64-digit lowercase hex tag values packed (tagval.h);
 *   2  the full-text index in search.db, not in this file (search_index.h).
 * A database newer than this stored knows is refused rather than misread.
 */
#ifndef STORED_UPGRADE_H
#define STORED_UPGRADE_H

#include <sqlite3.h>

#define UPGRADE_SCHEMA_VERSION 2

/* Rows converted per transaction: each commits on its own, so the WAL of a
 * large database's conversion stays small, and a crash keeps what is done
 * (the conversion of a row is idempotent: a packed value is 33 bytes). */
#define UPGRADE_CHUNK_ROWS 65536

/*
 * Runs on the writer's connection after the schema statements, before
 * anything reads: converts the rows of a version-0 database and sets the
 * version.  Returns 0, or ERR_DB (logged; also for a newer version).
 */
int upgrade_schema(sqlite3 *db);

#endif
