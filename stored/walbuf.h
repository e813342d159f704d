/*
 * walbuf.h - an SQLite VFS that gathers a commit's WAL writes into one.
 *
 * SQLite writes every WAL frame with two pwrite()s (its 24-byte header, then
 * the page), so a commit that dirtied 500 pages costs 1,000 system calls
 * before its fsync; on a paravirtualised machine each one is dear
 * (bench/RESULTS.md, "WAL writes").  This VFS wraps the default one and,
 * for WAL files only, keeps contiguous writes in a buffer that goes to the
 * file in one pwrite() at the WAL's next sync, read, size query, truncate,
 * close, or when the buffer is full or a write is not contiguous.
 *
 * Why that is safe only with synchronous = FULL: other connections (the
 * query threads, the checkpoint thread, an operator's sqlite3) read frames
 * from the file as soon as the WAL index says they are committed.  With
 * FULL, SQLite syncs the WAL before it updates the index, so the buffer is
 * always in the file first.  With NORMAL it does not sync at commit, so
 * db_open() uses this VFS only for writers opened with FULL (or EXTRA).
 *
 * A crash with frames still in the buffer loses only a transaction that had
 * not reached its commit's sync, so nothing that was answered OK.
 */
#ifndef STORED_WALBUF_H
#define STORED_WALBUF_H

#include <stdint.h>

/* The name to pass to sqlite3_open_v2(). */
#define WALBUF_VFS_NAME "crelay-walbuf"

/*
 * Registers the VFS (not as the default) over the default VFS; safe to call
 * from several threads and more than once.  Returns 0, or ERR_DB if SQLite
 * refused (the caller can open with the default VFS instead).
 */
int walbuf_register(void);

/* WAL writes handed to the file (pwrite calls) and writes SQLite asked for,
 * since start, over every walbuf connection: for tests and benchmarks. */
struct walbuf_counts {
	uint64_t writes_asked;
	uint64_t writes_done;
};
void walbuf_counts(struct walbuf_counts *out);

#endif
