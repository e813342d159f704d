/* readmap.c - read-only database files through a long-lived memory map (see readmap.h). */
#include "readmap.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/err.h"
#include "vfs_shim.h"

/* A map reserves address space past the file's end in steps this large,
 * so a growing file is mapped again only every step. */
#define READMAP_STEP ((size_t)256 << 20)
static _Atomic size_t readmap_step = READMAP_STEP;

struct readmap_file {
	struct vfs_shim_file shim; /* first: SQLite's header and the real file */
	int fd;                    /* our own descriptor of the file, for the map */
	unsigned char *map;
	size_t map_len;            /* address space reserved */
	sqlite3_int64 valid;       /* the file's size at the last refresh */
	sqlite3_int64 limit;       /* PRAGMA mmap_size (0: no pages from the map) */
};

#define READMAP_HEAD VFS_SHIM_HEAD(sizeof(struct readmap_file))

static sqlite3_vfs readmap_vfs;
static int readmap_register_rc = ERR_DB;
static pthread_once_t readmap_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t readmap_fetched, readmap_maps;

static struct readmap_file *readmap_of(sqlite3_file *f)
{
	return (struct readmap_file *)f;
}

/* Reads the file's size again and maps more of it if it outgrew the map.
 * Called only with no page of the map in SQLite's hands.  If mapping fails
 * the map is dropped for good and SQLite reads every page itself. */
static void readmap_refresh(struct readmap_file *f)
{
	struct stat st;
	size_t step, want;

	if (f->fd < 0 || fstat(f->fd, &st) != 0) {
		f->valid = 0;
		return;
	}
	f->valid = st.st_size;
	if (f->map && (size_t)st.st_size <= f->map_len)
		return;
	if (f->map)
		munmap(f->map, f->map_len);
	step = atomic_load(&readmap_step);
	want = ((size_t)st.st_size / step + 1) * step;
	f->map = mmap(NULL, want, PROT_READ, MAP_SHARED, f->fd, 0);
	if (f->map == MAP_FAILED) {
		/* For good: not tried again on every page (readmap_fetch). */
		f->map = NULL;
		f->map_len = 0;
		f->valid = 0;
		close(f->fd);
		f->fd = -1;
		return;
	}
	f->map_len = want;
	atomic_fetch_add(&readmap_maps, 1);
}

static int readmap_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out)
{
	struct readmap_file *f = readmap_of(file);
	sqlite3_int64 end = offset + amount;

	*out = NULL;
	if (f->limit <= 0)
		return SQLITE_OK;
	if (!f->map && f->fd >= 0)
		readmap_refresh(f);
	if (f->map && end <= f->valid && end <= f->limit) {
		*out = f->map + offset;
		atomic_fetch_add_explicit(&readmap_fetched, 1, memory_order_relaxed);
	}
	return SQLITE_OK;
}

/* SQLite's "unmap all" (page NULL) comes when its snapshot changed, with no
 * fetched page outstanding: the moment to learn the file's new size. */
static int readmap_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *page)
{
	(void)offset;
	if (!page)
		readmap_refresh(readmap_of(file));
	return SQLITE_OK;
}

static int readmap_file_control(sqlite3_file *file, int op, void *arg)
{
	struct readmap_file *f = readmap_of(file);

	if (op == SQLITE_FCNTL_MMAP_SIZE) {
		sqlite3_int64 *size = arg, asked = *size;

		*size = f->limit;
		if (asked >= 0)
			f->limit = asked;
		return SQLITE_OK;
	}
	return vfs_shim_file_control(file, op, arg);
}

static int readmap_close(sqlite3_file *file)
{
	struct readmap_file *f = readmap_of(file);

	if (f->map)
		munmap(f->map, f->map_len);
	if (f->fd >= 0)
		close(f->fd);
	f->map = NULL;
	f->fd = -1;
	return f->shim.real->pMethods->xClose(f->shim.real);
}

static const sqlite3_io_methods readmap_io = {
	.iVersion = 3,
	.xClose = readmap_close,
	.xRead = vfs_shim_file_read,
	.xWrite = vfs_shim_file_write,
	.xTruncate = vfs_shim_file_truncate,
	.xSync = vfs_shim_file_sync,
	.xFileSize = vfs_shim_file_size,
	.xLock = vfs_shim_file_lock,
	.xUnlock = vfs_shim_file_unlock,
	.xCheckReservedLock = vfs_shim_file_check_reserved,
	.xFileControl = readmap_file_control,
	.xSectorSize = vfs_shim_file_sector_size,
	.xDeviceCharacteristics = vfs_shim_file_device,
	.xShmMap = vfs_shim_file_shm_map,
	.xShmLock = vfs_shim_file_shm_lock,
	.xShmBarrier = vfs_shim_file_shm_barrier,
	.xShmUnmap = vfs_shim_file_shm_unmap,
	.xFetch = readmap_fetch,
	.xUnfetch = readmap_unfetch,
};

static int readmap_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags,
			int *out_flags)
{
	struct readmap_file *f = readmap_of(file);
	int rc;

	if (!name || !(flags & SQLITE_OPEN_MAIN_DB) || !(flags & SQLITE_OPEN_READONLY))
		return vfs_shim_real(vfs)->xOpen(vfs_shim_real(vfs), name, file, flags, out_flags);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	rc = vfs_shim_open_real(vfs, READMAP_HEAD, name, file, flags, out_flags);
	if (rc != SQLITE_OK)
		return rc;
	/* Without a descriptor of its own the file is still served, by pread. */
	f->fd = open(name, O_RDONLY | O_CLOEXEC);
	f->shim.base.pMethods = &readmap_io;
	return SQLITE_OK;
}

static void readmap_setup(void)
{
	if (vfs_shim_init(&readmap_vfs, READMAP_VFS_NAME, READMAP_HEAD, readmap_open) &&
	    sqlite3_vfs_register(&readmap_vfs, 0) == SQLITE_OK)
		readmap_register_rc = 0;
}

int readmap_register(void)
{
	pthread_once(&readmap_once, readmap_setup);
	return readmap_register_rc;
}

void readmap_use_step(size_t bytes)
{
	atomic_store(&readmap_step, bytes ? bytes : READMAP_STEP);
}

void readmap_counts(struct readmap_counts *out)
{
	out->fetched = atomic_load(&readmap_fetched);
	out->maps = atomic_load(&readmap_maps);
}
