/*
 * readmap.h - an SQLite VFS for the query threads: the database file read
 * through one memory map kept for the connection's life.
 *
 * Without a map, each page a REQ reads that SQLite's own cache lacks is a
 * pread() copying 8 KiB out of the kernel's page cache, and under writes
 * that is nearly every page: a reader's cache is emptied whenever another
 * connection committed since its last transaction.  SQLite's own
 * memory-mapped I/O (PRAGMA mmap_size) does not help there: on the same
 * occasion it unmaps the whole file, so each REQ maps it again and faults
 * every page in anew (bench/RESULTS.md item 22).  This VFS keeps the map: when SQLite lets go of every
 * page it had fetched ("unmap all"), only the file's size is read again,
 * and the map grows when the file has.
 *
 * Why that is as safe as SQLite's own mapping: SQLite fetches only pages of
 * its read snapshot that are not in the WAL, and the checkpointer never
 * writes such a page while a reader may read it (it copies into the file
 * only frames every reader's snapshot already holds, so the file then
 * holds exactly what such a reader would read) nor shrinks the file below a
 * live reader's snapshot.  Those are the rules SQLite's mapping relies on;
 * only the unmapping is skipped.  A page past the size read at the last
 * "unmap all" is not handed out: SQLite reads it with pread().
 *
 * Only read-only main database files are mapped; every other file opens as
 * the default VFS's, in place.  Each mapped file costs a descriptor of its
 * own (the default VFS keeps its descriptor private), and the pages a
 * reader has touched count in the process's resident size as file pages
 * (RssFile in /proc/PID/status): they are the kernel's page cache, shared
 * and reclaimable, not memory stored holds.
 */
#ifndef STORED_READMAP_H
#define STORED_READMAP_H

#include <stddef.h>
#include <stdint.h>

/* The name to pass to sqlite3_open_v2(). */
#define READMAP_VFS_NAME "crelay-readmap"

/* Registers the VFS (not as the default); safe from several threads and
 * more than once.  Returns 0, or ERR_DB if SQLite refused. */
int readmap_register(void);

/* Pages handed out from maps, and maps made (a first map or a larger one),
 * over every readmap connection since start: for tests and benchmarks. */
struct readmap_counts {
	uint64_t fetched;
	uint64_t maps;
};
void readmap_counts(struct readmap_counts *out);

/* The step in which maps reserve address space past the file's end
 * (256 MiB; 0 restores it).  For tests, to see a file outgrow its map. */
void readmap_use_step(size_t bytes);

#endif
