/*
 * diskwatch.h - whether the data directory's file system still has room.
 *
 * Below a reserve of free space stored refuses new events at once, with
 * DISKWATCH_MESSAGE, and keeps serving REQs.  So SQLite never meets a
 * full disk on the live path, and a checkpoint, `relayctl delete`,
 * retention and vacuum still find room to run.  The check is a statvfs()
 * by the first caller after DISKWATCH_INTERVAL_MS (diskwatch.c), so no
 * thread of its own is needed and the writer pays one clock read per
 * batch.  stored resumes by itself at the first check that finds room.
 */
#ifndef STORED_DISKWATCH_H
#define STORED_DISKWATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/config.h"

/* The OK message of an event refused for want of space. */
#define DISKWATCH_MESSAGE "error: the relay's storage is full"

/* Zeroed, it never reports the disk full (a check that is off). */
struct diskwatch {
	char dir[CONFIG_PATH_MAX];
	uint32_t reserve_mb; /* 0: off */
	atomic_int_fast64_t checked_ms; /* deadline_now_ms() of the last check */
	atomic_bool full;
	atomic_uint_fast64_t free_bytes;    /* at the last check */
	atomic_uint_fast64_t reserve_bytes; /* the reserve on that file system */
	atomic_uint_fast64_t refused;       /* events refused while full */
};

/* Watches the file system holding dir (copied) with a reserve of
 * reserve_mb MiB, raised to 1% of the file system and capped at a quarter
 * of it; reserve_mb 0 turns the watch off.  Call before other threads use
 * d. */
void diskwatch_init(struct diskwatch *d, const char *dir, uint32_t reserve_mb);

/* Whether free space is below the reserve, checked again when the last
 * check is DISKWATCH_INTERVAL_MS old.  Logs once when stored starts
 * refusing and once when it resumes.  Any thread; never blocks beyond the
 * statvfs(). */
bool diskwatch_full(struct diskwatch *d);

/* The reserve in bytes on a file system of total bytes: reserve_mb MiB,
 * but at least 1% and at most a quarter of total, so a small volume still
 * stores. */
uint64_t diskwatch_reserve_bytes(uint32_t reserve_mb, uint64_t total);

/* Counts n events refused with DISKWATCH_MESSAGE.  Any thread. */
void diskwatch_count_refused(struct diskwatch *d, uint64_t n);

#endif
