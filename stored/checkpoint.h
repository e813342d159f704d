/*
 * checkpoint.h - copying the WAL back into the database off the writer.
 *
 * The writer turns SQLite's automatic checkpoint off and pokes this thread
 * instead.  The thread runs PASSIVE checkpoints on its own connection,
 * which never block the writer.  An automatic checkpoint would copy and
 * sync inside the commit that crosses the threshold, before its events
 * are answered.
 *
 * The WAL starts over only when a write begins with every frame copied
 * and no reader on an older snapshot.  Beside a busy writer the thread's
 * passes copy all they saw, but the writer has committed more by their
 * end, so under steady ingest the WAL never starts over on their account.
 * So the writer still checkpoints on its own connection when the WAL passes
 * a hard bound (checkpointer_after_commit()), and after an idle spell
 * (checkpointer_idle()).  The bound is the config key wal_max_mb: the
 * WAL's size under ingest, a small multiple of CHECKPOINT_WAKE_PAGES.
 * checkpointer_limit_wal() makes SQLite cut the WAL file back to the bound
 * when it starts over, since a reader's snapshot can hold it past the
 * bound meanwhile.
 */
#ifndef STORED_CHECKPOINT_H
#define STORED_CHECKPOINT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

struct checkpointer;

/* Opens its own connection to the database at path (synchronous as the
 * config key db_synchronous) and starts the thread at nice value nice
 * (prio.h; 0: the caller's).  Returns the checkpointer, or NULL when the
 * open (logged), the thread or memory failed. */
struct checkpointer *checkpointer_start(const char *path, const char *synchronous, int nice);

/*
 * Called by the writer after each commit with the WAL's size in pages.
 * Returns true when the WAL is past the hard bound: the writer should then
 * checkpoint on its own connection now.  Wakes the thread each time the WAL
 * has grown by CHECKPOINT_WAKE_PAGES (checkpoint.c), but not in the last
 * CHECKPOINT_WAKE_PAGES before the bound.  Never blocks.
 */
bool checkpointer_after_commit(struct checkpointer *cp, int wal_pages);

/*
 * Called by the writer when it has had nothing to commit for a while, with
 * the WAL's size in pages: wakes the thread if the WAL grew since its last
 * wake.  Never blocks.  After a flood the WAL holds pages the thread was
 * never woken for; once it has copied them, the writer's next commit
 * starts the WAL over instead of carrying it towards the hard bound.
 */
void checkpointer_idle(struct checkpointer *cp, int wal_pages);
/* Whether checkpointer_idle() would wake the thread now (writer's thread
 * only, like the two calls above). */
bool checkpointer_idle_due(struct checkpointer *cp, int wal_pages);

/*
 * Sets the hard bound to the WAL frames that fit in max_bytes on the
 * writer's connection (its page size decides; CHECKPOINT_HARD_PAGES in
 * checkpoint.c until this is called), and makes that connection truncate
 * its WAL file to max_bytes whenever the WAL starts over past it
 * (journal_size_limit).  Call from the writer's thread before its first
 * commit.  Returns 0, ERR_INVAL (max_bytes holds no more frames than the
 * thread's wake threshold) or ERR_DB.
 */
int checkpointer_limit_wal(struct checkpointer *cp, sqlite3 *writer, int64_t max_bytes);

/* Stops the thread (finishing a checkpoint in progress) and frees it.
 * NULL-safe. */
void checkpointer_stop(struct checkpointer *cp);

/* How many checkpoints the thread ran, for tests and stats. */
unsigned long checkpointer_runs(const struct checkpointer *cp);

#endif
