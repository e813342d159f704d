/*
 * vfs_shim.h - the plumbing shared by this project's SQLite VFSes.
 *
 * walbuf.h and readmap.h each wrap the default (unix) VFS to change what
 * happens to one kind of file.  Everything else they hand to the default
 * VFS unchanged; this module holds those pass-throughs once:
 *   - vfs_shim_init() fills a VFS whose every method but xOpen calls the
 *     default VFS with its own handle (kept in pAppData);
 *   - a wrapped file starts with struct vfs_shim_file (SQLite's header and
 *     the default VFS's file it wraps), so the vfs_shim_file_* functions
 *     below can serve as the io methods a wrapper does not change.
 */
#ifndef STORED_VFS_SHIM_H
#define STORED_VFS_SHIM_H

#include <sqlite3.h>
#include <stddef.h>

/* The head of every wrapped file; the default VFS's file follows it at
 * VFS_SHIM_HEAD(sizeof(the wrapper's struct)). */
struct vfs_shim_file {
	sqlite3_file base;
	sqlite3_file *real;
};

#define VFS_SHIM_HEAD(size) (((size) + 15) & ~(size_t)15)

/*
 * Fills *vfs as a VFS named name over the default one, whose files take
 * head bytes before the default VFS's own, opened by open (which may open
 * a file the default way, in place).  Returns the default VFS, or NULL if
 * there is none this can wrap (version 2 or later).  Register it with
 * sqlite3_vfs_register(vfs, 0).
 */
sqlite3_vfs *vfs_shim_init(sqlite3_vfs *vfs, const char *name, size_t head,
			   int (*open)(sqlite3_vfs *, const char *, sqlite3_file *, int, int *));

/* The default VFS under a shim made by vfs_shim_init(). */
sqlite3_vfs *vfs_shim_real(const sqlite3_vfs *vfs);

/* Opens the default VFS's file for a wrapper: at file + head, remembered in
 * the wrapper's struct vfs_shim_file (which must start file).  The caller
 * sets file->pMethods when it succeeds. */
int vfs_shim_open_real(sqlite3_vfs *vfs, size_t head, const char *name, sqlite3_file *file,
		       int flags, int *out_flags);

/* io methods that only pass the call on to the wrapped file. */
int vfs_shim_file_read(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset);
int vfs_shim_file_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset);
int vfs_shim_file_truncate(sqlite3_file *file, sqlite3_int64 size);
int vfs_shim_file_sync(sqlite3_file *file, int flags);
int vfs_shim_file_size(sqlite3_file *file, sqlite3_int64 *size);
int vfs_shim_file_lock(sqlite3_file *file, int level);
int vfs_shim_file_unlock(sqlite3_file *file, int level);
int vfs_shim_file_check_reserved(sqlite3_file *file, int *out);
int vfs_shim_file_control(sqlite3_file *file, int op, void *arg);
int vfs_shim_file_sector_size(sqlite3_file *file);
int vfs_shim_file_device(sqlite3_file *file);
int vfs_shim_file_shm_map(sqlite3_file *file, int region, int size, int extend,
			  void volatile **out);
int vfs_shim_file_shm_lock(sqlite3_file *file, int offset, int n, int flags);
void vfs_shim_file_shm_barrier(sqlite3_file *file);
int vfs_shim_file_shm_unmap(sqlite3_file *file, int delete_flag);

#endif
