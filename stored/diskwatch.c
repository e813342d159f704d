/* diskwatch.c - the free space check (see diskwatch.h). */
#include "diskwatch.h"

#include <stdio.h>
#include <sys/statvfs.h>

#include "../common/deadline.h"
#include "../common/log.h"

/* How old a check may be.  The reserve must hold what stored writes in
 * that time: at most a few MiB of WAL at the fastest ingest. */
#define DISKWATCH_INTERVAL_MS 100

#define DISKWATCH_MIB (1024 * 1024)

void diskwatch_init(struct diskwatch *d, const char *dir, uint32_t reserve_mb)
{
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	d->reserve_mb = reserve_mb;
	atomic_store(&d->checked_ms, INT64_MIN / 2);
	atomic_store(&d->full, false);
}

uint64_t diskwatch_reserve_bytes(uint32_t reserve_mb, uint64_t total)
{
	uint64_t want = (uint64_t)reserve_mb * DISKWATCH_MIB;

	if (want < total / 100)
		want = total / 100;
	return want > total / 4 ? total / 4 : want;
}

/* Logs a change of state, once per change. */
static void diskwatch_log(const struct diskwatch *d, bool full, uint64_t free, uint64_t reserve)
{
	if (full)
		log_warnx("storage is full: %llu MiB free in %s, below the reserve of %llu MiB"
			  " (disk_reserve_mb): refusing new events",
			  (unsigned long long)(free / DISKWATCH_MIB), d->dir,
			  (unsigned long long)(reserve / DISKWATCH_MIB));
	else
		log_info("storage has room again: %llu MiB free in %s: storing new events",
			 (unsigned long long)(free / DISKWATCH_MIB), d->dir);
}

static void diskwatch_check(struct diskwatch *d)
{
	struct statvfs fs;
	uint64_t free, reserve;
	bool full;

	if (statvfs(d->dir, &fs))
		return; /* keep the last answer: a failed check says nothing */
	free = (uint64_t)fs.f_bavail * fs.f_frsize;
	reserve = diskwatch_reserve_bytes((uint32_t)d->reserve_mb, (uint64_t)fs.f_blocks * fs.f_frsize);
	full = free < reserve;
	atomic_store(&d->free_bytes, free);
	atomic_store(&d->reserve_bytes, reserve);
	if (atomic_exchange(&d->full, full) != full)
		diskwatch_log(d, full, free, reserve);
}

bool diskwatch_full(struct diskwatch *d)
{
	int64_t now, last;

	if (!d->reserve_mb)
		return false;
	now = deadline_now_ms();
	last = atomic_load(&d->checked_ms);
	/* One caller wins the check; the others take the last answer. */
	if (now - last >= DISKWATCH_INTERVAL_MS &&
	    atomic_compare_exchange_strong(&d->checked_ms, &last, now))
		diskwatch_check(d);
	return atomic_load(&d->full);
}

void diskwatch_count_refused(struct diskwatch *d, uint64_t n)
{
	atomic_fetch_add(&d->refused, n);
}
