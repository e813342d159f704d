/* walbuf.c - a VFS that writes a commit's WAL frames in few pwrite()s (see walbuf.h). */
#include "walbuf.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"

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
	sqlite3_file base;
	sqlite3_file *real;
	unsigned char *buf;
	size_t len;
	sqlite3_int64 at; /* file offset of buf[0] */
	bool commit_next;     /* the last write was a commit frame's header */
	bool commit_unsynced; /* a commit frame is in the file, not yet synced */
	struct walbuf_hook hook;
};

#define WALBUF_HEAD ((sizeof(struct walbuf_file) + 15) & ~(size_t)15)

static sqlite3_vfs *walbuf_real_vfs;
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
	rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->at);
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
		return f->real->pMethods->xWrite(f->real, data, amount, offset);
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

	return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, data, amount, offset);
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
	return f->real->pMethods->xSync(f->real, flags);
}

static int walbuf_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int walbuf_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f);

	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
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

	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int walbuf_close(sqlite3_file *file)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc = walbuf_flush(f), closed = f->real->pMethods->xClose(f->real);

	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : closed;
}

static int walbuf_lock(sqlite3_file *file, int level)
{
	sqlite3_file *real = walbuf_of(file)->real;

	return real->pMethods->xLock(real, level);
}

static int walbuf_unlock(sqlite3_file *file, int level)
{
	sqlite3_file *real = walbuf_of(file)->real;

	return real->pMethods->xUnlock(real, level);
}

static int walbuf_check_reserved(sqlite3_file *file, int *out)
{
	sqlite3_file *real = walbuf_of(file)->real;

	return real->pMethods->xCheckReservedLock(real, out);
}

static int walbuf_sector_size(sqlite3_file *file)
{
	sqlite3_file *real = walbuf_of(file)->real;

	return real->pMethods->xSectorSize(real);
}

static int walbuf_device(sqlite3_file *file)
{
	sqlite3_file *real = walbuf_of(file)->real;

	return real->pMethods->xDeviceCharacteristics(real);
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
	.xLock = walbuf_lock,
	.xUnlock = walbuf_unlock,
	.xCheckReservedLock = walbuf_check_reserved,
	.xFileControl = walbuf_file_control,
	.xSectorSize = walbuf_sector_size,
	.xDeviceCharacteristics = walbuf_device,
};

static int walbuf_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
		       int *out_flags)
{
	struct walbuf_file *f = walbuf_of(file);
	int rc;

	(void)vfs;
	if (!(flags & SQLITE_OPEN_WAL))
		return walbuf_real_vfs->xOpen(walbuf_real_vfs, name, file, flags, out_flags);
	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)((char *)file + WALBUF_HEAD);
	rc = walbuf_real_vfs->xOpen(walbuf_real_vfs, name, f->real, flags, out_flags);
	f->base.pMethods = rc == SQLITE_OK ? &walbuf_io : NULL;
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

/* The rest is the default VFS's, called with its own handle. */
static int walbuf_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	return walbuf_real_vfs->xDelete(walbuf_real_vfs, name, sync_dir);
}

static int walbuf_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return walbuf_real_vfs->xAccess(walbuf_real_vfs, name, flags, out);
}

static int walbuf_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return walbuf_real_vfs->xFullPathname(walbuf_real_vfs, name, n, out);
}

static void *walbuf_dl_open(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return walbuf_real_vfs->xDlOpen(walbuf_real_vfs, name);
}

static void walbuf_dl_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	walbuf_real_vfs->xDlError(walbuf_real_vfs, n, out);
}

static void (*walbuf_dl_sym(sqlite3_vfs *vfs, void *lib, const char *name))(void)
{
	(void)vfs;
	return walbuf_real_vfs->xDlSym(walbuf_real_vfs, lib, name);
}

static void walbuf_dl_close(sqlite3_vfs *vfs, void *lib)
{
	(void)vfs;
	walbuf_real_vfs->xDlClose(walbuf_real_vfs, lib);
}

static int walbuf_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return walbuf_real_vfs->xRandomness(walbuf_real_vfs, n, out);
}

static int walbuf_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return walbuf_real_vfs->xSleep(walbuf_real_vfs, us);
}

static int walbuf_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return walbuf_real_vfs->xCurrentTime(walbuf_real_vfs, out);
}

static int walbuf_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return walbuf_real_vfs->xGetLastError(walbuf_real_vfs, n, out);
}

static int walbuf_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return walbuf_real_vfs->xCurrentTimeInt64(walbuf_real_vfs, out);
}

static void walbuf_setup(void)
{
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);

	if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
		return;
	walbuf_real_vfs = real;
	walbuf_vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)(WALBUF_HEAD + (size_t)real->szOsFile),
		.mxPathname = real->mxPathname,
		.zName = WALBUF_VFS_NAME,
		.xOpen = walbuf_open,
		.xDelete = walbuf_delete,
		.xAccess = walbuf_access,
		.xFullPathname = walbuf_full_pathname,
		.xDlOpen = walbuf_dl_open,
		.xDlError = walbuf_dl_error,
		.xDlSym = walbuf_dl_sym,
		.xDlClose = walbuf_dl_close,
		.xRandomness = walbuf_randomness,
		.xSleep = walbuf_sleep,
		.xCurrentTime = walbuf_current_time,
		.xGetLastError = walbuf_last_error,
		.xCurrentTimeInt64 = walbuf_current_time64,
	};
	if (sqlite3_vfs_register(&walbuf_vfs, 0) == SQLITE_OK)
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
