/* walbuf.c - a VFS that writes a commit's WAL frames in few pwrite()s (see walbuf.h). */
#include "walbuf.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "vfs_shim.h"

/* The most the default (unix) VFS writes in one call: it masks a longer
 * length to 17 bits.  That is 15 frames of 8 KiB pages per pwrite() instead
 * of 30 calls. */
#define WALBUF_CAPACITY 0x1ffff

/*
 * What SQLite allocates for each file opened through this VFS.  A WAL file
 * is this struct followed by the default VFS's own file, which does the
 * I/O; any other file is the default VFS's file itself, opened in place, so
 * it pays nothing.
 */
struct walbuf_file {
	struct vfs_shim_file shim; /* first: SQLite's header and the real file */
	unsigned char *buf;
	size_t len;
	sqlite3_int64 at; /* file offset of buf[0] */
	bool commit_next;     /* the last write was a commit frame's header */
	bool commit_unsynced; /* a commit frame is in the file, not yet synced */
	struct walbuf_hook hook;
};

#define WALBUF_HEAD VFS_SHIM_HEAD(sizeof(struct walbuf_file))

static sqlite3_vfs walbuf_vfs;
static int walbuf_register_rc = ERR_DB;
static pthread_once_t walbuf_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t walbuf_asked, walbuf_done;

static struct walbuf_file *walbuf_of(sqlite3_file *f)
{
	return (struct walbuf_file *)f;
}

static int walbuf_flush(struct walbuf_file *f)
{
	int rc;

	if (f->len == 0)
		return SQLITE_OK;
	rc = vfs_shim_file_write(&f->shim.base, f->buf, (int)f->len, f->at);
	atomic_fetch_add(&walbuf_done, 1);
	f->len = 0;
	return rc;
}

/* A WAL frame's 24-byte header holds, in bytes 4-7, the database size
 * after the commit it ends, or zero if it ends none. */
#define WALBUF_FRAME_HEADER 24

static bool walbuf_is_commit_header(const void *data, size_t n)
{
	const unsigned char *h = data;

	return n == WALBUF_FRAME_HEADER && (h[4] | h[5] | h[6] | h[7]);
}

static int walbuf_buffer(struct walbuf_file *f, const void *data, int amount,
			 sqlite3_int64 offset);

/*
 * A commit frame goes to the file as soon as its page is written, before
 * SQLite marks the commit in the WAL index for other connections: with
 * synchronous = NORMAL there is no sync to wait for, and with FULL the
 * sync that follows at once finds the buffer empty.
 */
static int walbuf_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset)
{
	struct walbuf_file *f = walbuf_of(file);
	bool ends_commit = f->commit_next;
	int rc;

	f->commit_next = walbuf_is_commit_header(data, (size_t)amount);
	rc = walbuf_buffer(f, data, amount, offset);
	if (rc == SQLITE_OK && ends_commit) {
		rc = walbuf_flush(f);
		f->commit_unsynced = rc == SQLITE_OK;
	}
	return rc;
}

static int walbuf_buffer(struct walbuf_file *f, const void *data, int amount,
			 sqlite3_int64 offset)
{
	size_t n = (size_t)amount;
	int rc;

	atomic_fetch_add(&walbuf_asked, 1);
	/* SQLite rewrites a frame of the current commit in place when the
	 * same page changes twice: that lands inside the buffer. */
	if (f->len && offset >= f->at && offset + (sqlite3_int64)n <= f->at + (sqlite3_int64)f->len) {
		memcpy(f->buf + (offset - f->at), data, n);
		return SQLITE_OK;
	}
	if (f->len && offset == f->at + (sqlite3_int64)f->len && f->len + n <= WALBUF_CAPACITY) {
		memcpy(f->buf + f->len, data, n);
		f->len += n;
		return SQLITE_OK;
	}
	if ((rc = walbuf_flush(f)) != SQLITE_OK)
		return rc;
	if (n >= WALBUF_CAPACITY || (!f->buf && !(f->buf = malloc(WALBUF_CAPACITY)))) {
		atomic_fetch_add(&walbuf_done, 1);
		return vfs_shim_file_write(&f->shim.base, data, amount, offset);
	}
	memcpy(f->buf, data, n);
	f->len = n;
	f->at = offset;
	return SQLITE_OK;
}

/* Everything that looks at the file sees the buffer in it first. */
static int walbuf_read(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f);

	return rc != SQLITE_OK ? rc : vfs_shim_file_read(file, data, amount, offset);
}

/* The commit's frames are in the file before the hook runs, so a crash
 * of this process from here on keeps the commit (WAL recovery finds its
 * commit frame); only the sync below is still to come. */
static int walbuf_sync(sqlite3_file *file, int flags)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f);

	if (rc != SQLITE_OK)
		return rc;
	if (f->commit_unsynced && f->hook.fn)
		f->hook.fn(f->hook.arg);
	f->commit_unsynced = false;
	return vfs_shim_file_sync(file, flags);
}

static int walbuf_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f);

	return rc != SQLITE_OK ? rc : vfs_shim_file_truncate(file, size);
}

static int walbuf_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f);

	return rc != SQLITE_OK ? rc : vfs_shim_file_size(file, size);
}

/* Not one of SQLite's SQLITE_FCNTL_* codes (those are below 100). */
#define WALBUF_FCNTL_HOOK 0x57424801

static int walbuf_file_control(sqlite3_file *file, int op, void *arg)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc;

	if (op == WALBUF_FCNTL_HOOK) {
		f->hook = *(const struct walbuf_hook *)arg;
		return SQLITE_OK;
	}
	rc = walbuf_flush(f);

	return rc != SQLITE_OK ? rc : vfs_shim_file_control(file, op, arg);
}

static int walbuf_close(sqlite3_file *file)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f), closed = f->shim.real->pMethods->xClose(f->shim.real);

	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : closed;
}

/* Version 1: SQLite maps shared memory and pages through the database
 * file, never through its WAL. */
static const sqlite3_io_methods walbuf_io = {
	.iVersion = 1,
	.xClose = walbuf_close,
	.xRead = walbuf_read,
	.xWrite = walbuf_write,
	.xTruncate = walbuf_truncate,
	.xSync = walbuf_sync,
	.xFileSize = walbuf_file_size,
	.xLock = vfs_shim_file_lock,
	.xUnlock = vfs_shim_file_unlock,
	.xCheckReservedLock = vfs_shim_file_check_reserved,
	.xFileControl = walbuf_file_control,
	.xSectorSize = vfs_shim_file_sector_size,
	.xDeviceCharacteristics = vfs_shim_file_device,
};

static int walbuf_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
		       int *out_flags)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc;

	if (!(flags & SQLITE_OPEN_WAL))
		return vfs_shim_real(vfs)->xOpen(vfs_shim_real(vfs), name, file, flags, out_flags);
	memset(f, 0, sizeof(*f));
	rc = vfs_shim_open_real(vfs, WALBUF_HEAD, name, file, flags, out_flags);
	f->shim.base.pMethods = rc == SQLITE_OK ? &walbuf_io : NULL;
	return rc;
}

int walbuf_on_commit_written(sqlite3 *db, struct walbuf_hook hook)
{
	sqlite3_file *wal = NULL;

	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
	    !wal || wal->pMethods != &walbuf_io)
		return ERR_DB;
	return wal->pMethods->xFileControl(wal, WALBUF_FCNTL_HOOK, &hook) == SQLITE_OK ? 0 : ERR_DB;
}

static void walbuf_setup(void)
{
	if (vfs_shim_init(&walbuf_vfs, WALBUF_VFS_NAME, WALBUF_HEAD, walbuf_open) &&
	    sqlite3_vfs_register(&walbuf_vfs, 0) == SQLITE_OK)
		walbuf_register_rc = 0;
}

int walbuf_register(void)
{
	pthread_once(&walbuf_once, walbuf_setup);
	return walbuf_register_rc;
}

void walbuf_counts(struct walbuf_counts *out)
{
	out->writes_asked = atomic_load(&walbuf_asked);
	out->writes_done = atomic_load(&walbuf_done);
}
