/* vfs_shim.c - pass-throughs to the default VFS for this project's VFSes (see vfs_shim.h). */
#include "vfs_shim.h"

#include <string.h>

sqlite3_vfs *vfs_shim_real(const sqlite3_vfs *vfs)
{
	return vfs->pAppData;
}

static sqlite3_file *vfs_shim_inner(sqlite3_file *file)
{
	return ((struct vfs_shim_file *)file)->real;
}

int vfs_shim_open_real(sqlite3_vfs *vfs, size_t head, const char *name, sqlite3_file *file,
		       int flags, int *out_flags)
{
	struct vfs_shim_file *f = (struct vfs_shim_file *)file;
	sqlite3_vfs *real = vfs_shim_real(vfs);

	f->base.pMethods = NULL;
	f->real = (sqlite3_file *)((char *)file + head);
	return real->xOpen(real, name, f->real, flags, out_flags);
}

int vfs_shim_file_read(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xRead(real, data, amount, offset);
}

int vfs_shim_file_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xWrite(real, data, amount, offset);
}

int vfs_shim_file_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xTruncate(real, size);
}

int vfs_shim_file_sync(sqlite3_file *file, int flags)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xSync(real, flags);
}

int vfs_shim_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xFileSize(real, size);
}

int vfs_shim_file_lock(sqlite3_file *file, int level)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xLock(real, level);
}

int vfs_shim_file_unlock(sqlite3_file *file, int level)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xUnlock(real, level);
}

int vfs_shim_file_check_reserved(sqlite3_file *file, int *out)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xCheckReservedLock(real, out);
}

int vfs_shim_file_control(sqlite3_file *file, int op, void *arg)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xFileControl(real, op, arg);
}

int vfs_shim_file_sector_size(sqlite3_file *file)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xSectorSize(real);
}

int vfs_shim_file_device(sqlite3_file *file)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xDeviceCharacteristics(real);
}

int vfs_shim_file_shm_map(sqlite3_file *file, int region, int size, int extend,
			  void volatile **out)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xShmMap(real, region, size, extend, out);
}

int vfs_shim_file_shm_lock(sqlite3_file *file, int offset, int n, int flags)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xShmLock(real, offset, n, flags);
}

void vfs_shim_file_shm_barrier(sqlite3_file *file)
{
	sqlite3_file *real = vfs_shim_inner(file);

	real->pMethods->xShmBarrier(real);
}

int vfs_shim_file_shm_unmap(sqlite3_file *file, int delete_flag)
{
	sqlite3_file *real = vfs_shim_inner(file);

	return real->pMethods->xShmUnmap(real, delete_flag);
}

/* The rest of a VFS is the default one's, called with its own handle. */
static int vfs_shim_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xDelete(real, name, sync_dir);
}

static int vfs_shim_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xAccess(real, name, flags, out);
}

static int vfs_shim_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xFullPathname(real, name, n, out);
}

static void *vfs_shim_dl_open(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xDlOpen(real, name);
}

static void vfs_shim_dl_error(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	real->xDlError(real, n, out);
}

static void (*vfs_shim_dl_sym(sqlite3_vfs *vfs, void *lib, const char *name))(void)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xDlSym(real, lib, name);
}

static void vfs_shim_dl_close(sqlite3_vfs *vfs, void *lib)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	real->xDlClose(real, lib);
}

static int vfs_shim_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xRandomness(real, n, out);
}

static int vfs_shim_sleep(sqlite3_vfs *vfs, int us)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xSleep(real, us);
}

static int vfs_shim_current_time(sqlite3_vfs *vfs, double *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xCurrentTime(real, out);
}

static int vfs_shim_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xGetLastError(real, n, out);
}

static int vfs_shim_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	sqlite3_vfs *real = vfs_shim_real(vfs);

	return real->xCurrentTimeInt64(real, out);
}

sqlite3_vfs *vfs_shim_init(sqlite3_vfs *vfs, const char *name, size_t head,
			   int (*open)(sqlite3_vfs *, const char *, sqlite3_file *, int, int *))
{
	sqlite3_vfs *real = sqlite3_vfs_find(NULL);

	if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
		return NULL;
	*vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)(head + (size_t)real->szOsFile),
		.mxPathname = real->mxPathname,
		.zName = name,
		.pAppData = real,
		.xOpen = open,
		.xDelete = vfs_shim_delete,
		.xAccess = vfs_shim_access,
		.xFullPathname = vfs_shim_full_pathname,
		.xDlOpen = vfs_shim_dl_open,
		.xDlError = vfs_shim_dl_error,
		.xDlSym = vfs_shim_dl_sym,
		.xDlClose = vfs_shim_dl_close,
		.xRandomness = vfs_shim_randomness,
		.xSleep = vfs_shim_sleep,
		.xCurrentTime = vfs_shim_current_time,
		.xGetLastError = vfs_shim_last_error,
		.xCurrentTimeInt64 = vfs_shim_current_time64,
	};
	return real;
}
