/*
 * db.h - the SQLite database: opening it, its schema, its pragmas.
 *
 * Table events holds one row per stored event; seq (AUTOINCREMENT, never
 * reused) is the commit order, which the broadcaster uses to split "stored"
 * from "live" without gaps or duplicates.  addr is '' for replaceable kinds,
 * the d value for addressable ones and NULL otherwise.  Table tags holds the
 * first value of each single-letter tag, with created_at copied in so tag
 * queries can order without touching events.
 */
#ifndef STORED_DB_H
#define STORED_DB_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Opens (creating if needed) the database at path.  The writer opens it with
 * writable = true, which also creates the schema and sets WAL mode and
 * synchronous (full or normal); readers pass false.  Returns 0 with *out set,
 * or ERR_DB (logged).
 */
int db_open(const char *path, bool writable, const char *synchronous, sqlite3 **out);

/*
 * Opens the existing database at path for checkpoints only: read-write with
 * synchronous (the checkpoint syncs the database file), SQLite's own VFS
 * (it writes no WAL frames), and no schema statements, which belong to the
 * writer's connection.  Returns 0 with *out set, or ERR_DB (logged).
 */
int db_open_checkpointer(const char *path, const char *synchronous, sqlite3 **out);
/*
 * At a clean stop, once every other connection of this process is closed:
 * copies what is left of path's WAL into the database, syncs it, and
 * removes the WAL, so the database file alone holds every commit (a copy of
 * it is a complete backup) and the next start has no WAL to read.  The last
 * connections to close are read-only ones, which can do neither.  Nothing
 * to do for a file that does not exist.  Returns 0, or ERR_DB (logged: the
 * WAL then stays, and the next start recovers it as after a crash).
 */
int db_finish_wal(const char *path);

/*
 * With on, later db_open() calls for a writer with synchronous "full" use
 * the WAL-buffering VFS (walbuf.h); off (the default) opens every
 * connection with SQLite's own.  Call before any thread opens the database.
 */
void db_use_wal_buffer(bool on);

/*
 * Sets the page cache of every connection opened after this call to mb MiB
 * (default 32).  Call before any thread opens the database.  Each of
 * stored's connections (the writer, each query thread, the indexer, the
 * checkpointer, metrics, admin, and rpc's for ephemeral events, gate.h)
 * fills its cache once the database outgrows it, so these caches are most
 * of stored's memory (bench/RESULTS.md, "Soak").
 */
void db_use_cache_mb(uint32_t mb);

/*
 * On: read-only connections opened after this call read the database file
 * through a memory map each keeps for its life (readmap.h) instead of
 * copying each page with pread().  Off (the default) opens them with
 * SQLite's own VFS.  Call before any thread opens the database.
 */
void db_use_read_map(bool on);

/*
 * With a path, later db_open() calls for readers also attach the full-text
 * index there (search_index.h) read-only as "search", so a query can join
 * it; NULL (the default, search = 0) attaches nothing.  Call before any
 * reader opens the database.
 */
void db_use_search_index(const char *path);

/* Opens (creating if needed) the full-text index file at path for its one
 * writer, in WAL mode.  Returns 0 with *out set, or ERR_DB (logged). */
int db_open_index(const char *path, sqlite3 **out);

/* Attaches the database at path to db read-only under name: no write lock
 * is ever taken on it through db.  Returns 0 or ERR_DB (logged). */
int db_attach(sqlite3 *db, const char *path, const char *name);

/*
 * Process-wide SQLite settings, before anything else uses SQLite: memory
 * statistics off, which SQLite otherwise keeps under one global mutex that
 * every allocation of every connection takes.  Returns 0 or ERR_DB (SQLite
 * was already in use; the settings then stay as they were).
 */
int db_init_library(void);

/* Closes db.  NULL-safe. */
void db_close(sqlite3 *db);

/* Sets *count to the number of rows in events.  Returns 0 or ERR_DB. */
int db_count_events(sqlite3 *db, uint64_t *count);

/* Sets *seq to the largest seq committed (0 for an empty database).
 * Returns 0 or ERR_DB. */
int db_max_seq(sqlite3 *db, int64_t *seq);

/* Sets *bytes to the database's page size.  Returns 0 or ERR_DB. */
int db_page_size(sqlite3 *db, int64_t *bytes);

#endif
