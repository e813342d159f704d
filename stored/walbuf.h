/*
 * walbuf.h - an SQLite VFS that gathers a commit's WAL writes into one.
 *
 * SQLite writes every WAL frame with two pwrite()s (its 24-byte header, then
 * the page), so a commit costs two system calls per dirty page before its
 * fsync; on a paravirtualised machine each one is dear (bench/RESULTS.md,
 * "WAL writes").  This VFS wraps the default one and,
 * for WAL files only, keeps contiguous writes in a buffer that goes to the
 * file in one pwrite() once a commit frame's page is written (its 24-byte
 * header carries the database size after the commit; other frames carry
 * zero), or at the WAL's next sync, read, size query, truncate, close, or
 * when the buffer is full or a write is not contiguous.
 *
 * Why that is safe with synchronous = FULL and NORMAL alike: other
 * connections (the query threads, the checkpoint thread, an operator's
 * sqlite3) read frames from the file as soon as the WAL index says they
 * are committed, and SQLite updates the index only after it has written
 * the commit frame (and, with FULL, synced the WAL), so the buffer is
 * always in the file first.  A process crash after the commit frame's
 * write loses nothing, as with SQLite's own writes.
 *
 * A crash with frames still in the buffer loses only a transaction whose
 * commit frame had not been written, so nothing that was answered OK.
 */
#ifndef STORED_WALBUF_H
#define STORED_WALBUF_H

#include <sqlite3.h>
#include <stdint.h>

/* The name to pass to sqlite3_open_v2(). */
#define WALBUF_VFS_NAME "crelay-walbuf"

/*
 * Registers the VFS (not as the default) over the default VFS; safe to call
 * from several threads and more than once.  Returns 0, or ERR_DB if SQLite
 * refused (the caller can open with the default VFS instead).
 */
int walbuf_register(void);

/*
 * Has fn(arg) called on the thread committing through db, each time the
 * WAL is about to be synced with a commit frame written since its last
 * sync.  With synchronous = FULL that is inside each COMMIT: the commit's
 * frames are in the WAL file, so from then on only a crash of the machine,
 * not of this process, can lose it, and other connections see it once the
 * sync is done.  With NORMAL a commit does not sync, and fn runs only at a
 * later checkpoint's sync.  fn NULL removes it.  Returns 0, or ERR_DB if db
 * does not write its WAL through this VFS.
 */
struct walbuf_hook {
	void (*fn)(void *arg);
	void *arg;
};
int walbuf_on_commit_written(sqlite3 *db, struct walbuf_hook hook);

/* WAL writes handed to the file (pwrite calls) and writes SQLite asked for,
 * since start, over every walbuf connection: for tests and benchmarks. */
struct walbuf_counts {
	uint64_t writes_asked;
	uint64_t writes_done;
};
void walbuf_counts(struct walbuf_counts *out);

#endif
