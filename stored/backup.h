/*
 * backup.h - a consistent copy of relay.db taken while the relay runs
 * (relayctl backup).
 *
 * Copying relay.db and its WAL with cp while stored writes can catch a
 * commit half-way; stopping stored for the copy stops the relay.  A backup
 * here copies the database's pages with SQLite's backup API on a thread of
 * its own, in steps, inside one read transaction: every step reads the
 * same snapshot (the newest commit when the backup began), so the copy is
 * that snapshot exactly, whatever the writer commits meanwhile, and no
 * client waits for it.  Holding the snapshot keeps checkpoints from
 * copying the WAL past it until the copy ends, so the WAL grows by what is
 * ingested meanwhile: the writer skips its own checkpoints then
 * (backup_holds_wal()), and the backup's thread copies that backlog into
 * the database when its copy ends, off the live path.  A TRUNCATE
 * checkpoint (relayctl checkpoint, vacuum) would wait for the snapshot
 * with the writer: the admin socket refuses those while a backup runs.
 *
 * The copy is written to "<dest>.partial", synced, and given the name dest
 * only when complete (a hard link, or a rename that never replaces where
 * the filesystem has no links), so a file named dest is always a whole
 * backup.  A stored killed mid-copy leaves the partial file behind.  It
 * is relay.db as it was: a relay started on a data_dir holding it as
 * relay.db serves every event acknowledged before the backup began
 * (search.db is rebuilt from it).
 *
 * One backup at a time.  Threading: any thread may call these; the copy
 * runs on the backup's own thread.
 */
#ifndef STORED_BACKUP_H
#define STORED_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/config.h"

enum backup_state {
	BACKUP_NONE,    /* none since stored started */
	BACKUP_RUNNING,
	BACKUP_DONE,
	BACKUP_FAILED,
};

struct backup_status {
	enum backup_state state;
	char path[CONFIG_PATH_MAX];
	uint64_t pages_done, pages_total; /* database pages copied so far, of */
	uint64_t events;    /* events in the snapshot copied */
	uint64_t max_seq;   /* its newest commit's event seq */
	uint64_t bytes;     /* size of the finished copy */
	uint64_t wal_checkpointed; /* WAL pages copied into the database as it
				      ended (what grew while it held its snapshot) */
	double seconds;     /* since it began (running), or how long it took */
	char error[256];    /* BACKUP_FAILED: why */
};

struct backup;

/* Pages per step stored uses (8 MiB of 8 KiB pages). */
#define BACKUP_STEP_PAGES 1024

/* A backup manager for the database at db_path whose copy thread runs at
 * nice value nice (prio.h), copying step_pages pages per step.  Returns it,
 * or NULL without memory.  Starts no thread until backup_start(). */
struct backup *backup_new(const char *db_path, int nice, int step_pages);

/*
 * Starts copying the database to dest: an absolute path whose directory
 * exists and is not the database's own, and where neither dest nor
 * "<dest>.partial" exists yet.  Returns
 * 0, ERR_FULL (a backup is running), ERR_INVAL (dest refused; why says
 * why), or ERR_NOMEM.
 */
int backup_start(struct backup *b, const char *dest, char *why, size_t why_len);

/* Whether a copy holds its snapshot, or its thread is copying the WAL
 * that grew meanwhile: the writer does not checkpoint then.  NULL-safe. */
bool backup_holds_wal(struct backup *b);

/* The running backup's progress, or how the last one ended. */
void backup_status(struct backup *b, struct backup_status *out);

/* Stops a running copy (its partial file is removed), waits for its
 * thread and frees b.  NULL-safe. */
void backup_free(struct backup *b);

#endif
