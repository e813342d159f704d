/* db.c - opening the database and creating its schema (see db.h). */
#include "db.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/log.h"
#include "readmap.h"
#include "sql.h"
#include "walbuf.h"
#include "upgrade.h"

#define DB_PAGE_SIZE "8192"
#define DB_READ_MAP_MAX "1099511627776"

static const char db_schema[] =
	"CREATE TABLE IF NOT EXISTS events("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" id BLOB NOT NULL UNIQUE,"
	" pubkey BLOB NOT NULL,"
	" created_at INTEGER NOT NULL,"
	" kind INTEGER NOT NULL,"
	" addr TEXT,"
	" expires_at INTEGER,"
	" json TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS events_created ON events(created_at);"
	"CREATE INDEX IF NOT EXISTS events_pubkey ON events(pubkey, created_at);"
	"CREATE INDEX IF NOT EXISTS events_kind ON events(kind, created_at);"
	"CREATE INDEX IF NOT EXISTS events_pubkey_kind ON events(pubkey, kind, created_at);"
	"CREATE INDEX IF NOT EXISTS events_addr ON events(pubkey, kind, addr) WHERE addr IS NOT NULL;"
	"CREATE TABLE IF NOT EXISTS tags("
	" seq INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" value BLOB NOT NULL,"
	" created_at INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS tags_value ON tags(name, value, created_at);"
	"CREATE INDEX IF NOT EXISTS tags_seq ON tags(seq);"
	"CREATE INDEX IF NOT EXISTS events_expires ON events(expires_at) WHERE expires_at IS NOT NULL;"
	/* NIP-09: ids an author deleted (refused if they come back), and
	 * addresses deleted up to a created_at. */
	"CREATE TABLE IF NOT EXISTS deleted_ids("
	" id BLOB NOT NULL, pubkey BLOB NOT NULL, PRIMARY KEY(id, pubkey)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS deleted_addrs("
	" pubkey BLOB NOT NULL, kind INTEGER NOT NULL, addr TEXT NOT NULL, until INTEGER NOT NULL,"
	" PRIMARY KEY(pubkey, kind, addr)) WITHOUT ROWID;"
	/* NIP-62: pubkeys that vanished, up to a created_at. */
	"CREATE TABLE IF NOT EXISTS vanished("
	" pubkey BLOB PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID;"
	/* Pubkeys the operator banned (relayctl ban): their events are refused
	 * at ingest; what they stored before stays until deleted. */
	"CREATE TABLE IF NOT EXISTS banned_pubkeys("
	" pubkey BLOB PRIMARY KEY, reason TEXT NOT NULL, created_at INTEGER NOT NULL)"
	" WITHOUT ROWID;"
	/* NIP-86 management state (stored/admin_nip86.c): who and what may be
	 * published, addresses refused at connect, relay texts shown in NIP-11. */
	"CREATE TABLE IF NOT EXISTS allowed_pubkeys("
	" pubkey BLOB PRIMARY KEY, reason TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS banned_events("
	" id BLOB PRIMARY KEY, reason TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS allowed_kinds(kind INTEGER PRIMARY KEY);"
	"CREATE TABLE IF NOT EXISTS blocked_ips("
	" ip TEXT PRIMARY KEY, reason TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS relay_info(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
	/* NIP-50's index is search.db (search_index.h): the seqs of events
	 * deleted since it last looked, for it to remove their text; ids
	 * are never reused, so "applied up to id" is exact. */
	"CREATE TABLE IF NOT EXISTS search_gone("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL);"
	/* A token of this file's own, so search.db knows whose index it is. */
	"CREATE TABLE IF NOT EXISTS db_identity(token BLOB NOT NULL);"
	"INSERT INTO db_identity SELECT randomblob(16)"
	" WHERE NOT EXISTS (SELECT 1 FROM db_identity);"
	/* Every way an event leaves (replaced, deleted, expired, vanished,
	 * removed by an operator) takes its tag rows with it. */
	"CREATE TRIGGER IF NOT EXISTS events_cleanup AFTER DELETE ON events BEGIN"
	" DELETE FROM tags WHERE seq = old.seq;"
	" END;";

static int db_prepare_writer(sqlite3 *db, const char *synchronous)
{
	char pragma[64];

	/* Takes effect only while the file is empty (a new database).  Every
	 * event dirties a few index pages chosen by random keys (id, tag
	 * values, pubkeys), each written whole to the WAL with its own system
	 * calls: large commits touch fewer, larger pages more cheaply, small
	 * commits write more bytes per event.  8 KiB measured best across
	 * both (bench/RESULTS.md, "page size"). */
	if (sql_exec(db, "PRAGMA page_size=" DB_PAGE_SIZE) || sql_exec(db, "PRAGMA journal_mode=WAL"))
		return ERR_DB;
	snprintf(pragma, sizeof(pragma), "PRAGMA synchronous=%s", synchronous);
	if (sql_exec(db, pragma) || sql_exec(db, "PRAGMA foreign_keys=OFF"))
		return ERR_DB;
	if (sql_exec(db, db_schema))
		return ERR_DB;
	return upgrade_schema(db);
}

static bool db_wal_buffer;
static bool db_read_map;
static uint32_t db_cache_mb = 32;
static char db_search_path[4096];

void db_use_wal_buffer(bool on)
{
	db_wal_buffer = on;
}

void db_use_read_map(bool on)
{
	db_read_map = on;
}

void db_use_cache_mb(uint32_t mb)
{
	db_cache_mb = mb;
}

int db_init_library(void)
{
	return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK ? 0 : ERR_DB;
}

void db_use_search_index(const char *path)
{
	snprintf(db_search_path, sizeof(db_search_path), "%s", path ? path : "");
}

/* Connections that write (the writer; the checkpoint thread, which only
 * copies frames out) go through the WAL buffer; readers never write the
 * WAL (walbuf.h), and read the file through a map of their own
 * (readmap.h). */
static const char *db_vfs(bool writable, const char *synchronous)
{
	if (!writable)
		return db_read_map && readmap_register() == 0 ? READMAP_VFS_NAME : NULL;
	if (!db_wal_buffer || !synchronous)
		return NULL;
	return walbuf_register() == 0 ? WALBUF_VFS_NAME : NULL;
}

/* A connection with the settings every one shares, or NULL (logged). */
static sqlite3 *db_connect(const char *path, int flags, const char *vfs)
{
	sqlite3 *db = NULL;
	char pragma[48];

	/* Each connection is owned by one thread; URIs for db_attach. */
	flags |= SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
	if (sqlite3_open_v2(path, &db, flags, vfs) != SQLITE_OK) {
		log_warnx("cannot open database %s: %s", path, db ? sqlite3_errmsg(db) : "no memory");
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, 5000);
	snprintf(pragma, sizeof(pragma), "PRAGMA cache_size=-%u", db_cache_mb * 1024);
	if (sql_exec(db, pragma)) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

int db_open(const char *path, bool writable, const char *synchronous, sqlite3 **out)
{
	int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
	const char *vfs = db_vfs(writable, synchronous);
	sqlite3 *db = db_connect(path, flags, vfs);

	if (!db)
		return ERR_DB;
	/* SQLite caps it at its compile-time maximum (2 GiB in Debian 12's);
	 * pages past it are read with pread(). */
	if (vfs && strcmp(vfs, READMAP_VFS_NAME) == 0 &&
	    sql_exec(db, "PRAGMA mmap_size=" DB_READ_MAP_MAX)) {
		sqlite3_close(db);
		return ERR_DB;
	}
	if (writable ? db_prepare_writer(db, synchronous)
		     : db_search_path[0] && db_attach(db, db_search_path, "search")) {
		sqlite3_close(db);
		return ERR_DB;
	}
	*out = db;
	return 0;
}

int db_open_index(const char *path, sqlite3 **out)
{
	sqlite3 *db = db_connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);

	if (!db)
		return ERR_DB;
	/* full: the writer prunes relay.db's log of deleted events once
	 * this file has applied it, so what it applied must survive power
	 * loss.  It commits about once a second. */
	if (sql_exec(db, "PRAGMA page_size=" DB_PAGE_SIZE) || sql_exec(db, "PRAGMA journal_mode=WAL") ||
	    sql_exec(db, "PRAGMA synchronous=full")) {
		sqlite3_close(db);
		return ERR_DB;
	}
	*out = db;
	return 0;
}

/* Appends path to uri, percent-encoding what a URI filename may not hold. */
static void db_uri_path(char *uri, size_t size, const char *path)
{
	size_t n = strlen(uri);

	for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < size; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-", *p))
			uri[n++] = (char)*p;
		else
			n += (size_t)snprintf(uri + n, size - n, "%%%02X", *p);
	}
	uri[n] = '\0';
}

int db_attach(sqlite3 *db, const char *path, const char *name)
{
	char uri[3 * 4096 + 32] = "file:", sql[64];
	sqlite3_stmt *st;
	int rc;

	db_uri_path(uri, sizeof(uri) - 16, path);
	strcat(uri, "?mode=ro");
	snprintf(sql, sizeof(sql), "ATTACH DATABASE ?1 AS %s", name);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_warnx("sqlite: %s: %s", sql, sqlite3_errmsg(db));
		return ERR_DB;
	}
	sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_warnx("cannot attach %s read-only: %s", path, sqlite3_errmsg(db));
		return ERR_DB;
	}
	return 0;
}

int db_open_checkpointer(const char *path, const char *synchronous, sqlite3 **out)
{
	char pragma[64];
	sqlite3 *db = db_connect(path, SQLITE_OPEN_READWRITE, NULL);

	if (!db)
		return ERR_DB;
	snprintf(pragma, sizeof(pragma), "PRAGMA synchronous=%s", synchronous);
	if (sql_exec(db, pragma)) {
		sqlite3_close(db);
		return ERR_DB;
	}
	*out = db;
	return 0;
}

int db_finish_wal(const char *path)
{
	int wal_pages = 0, copied = 0, rc;
	sqlite3 *db;

	if (access(path, F_OK) != 0)
		return 0;
	if (!(db = db_connect(path, SQLITE_OPEN_READWRITE, NULL)))
		return ERR_DB;
	rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_TRUNCATE, &wal_pages, &copied);
	if (rc != SQLITE_OK)
		log_warnx("%s: final checkpoint: %s; its WAL stays for the next start", path,
			  sqlite3_errmsg(db));
	else
		log_info("%s: final checkpoint copied %d of %d WAL pages", path, copied, wal_pages);
	/* The only connection: closing it removes the WAL and -shm files. */
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : ERR_DB;
}

void db_close(sqlite3 *db)
{
	if (db)
		sqlite3_close(db);
}

int db_count_events(sqlite3 *db, uint64_t *count)
{
	int64_t n = 0;
	int rc = sql_read_int(db, "SELECT count(*) FROM events", &n);

	*count = (uint64_t)n;
	return rc;
}

int db_max_seq(sqlite3 *db, int64_t *seq)
{
	return sql_read_int(db, "SELECT coalesce(max(seq), 0) FROM events", seq);
}

int db_page_size(sqlite3 *db, int64_t *bytes)
{
	return sql_read_int(db, "PRAGMA page_size", bytes);
}
