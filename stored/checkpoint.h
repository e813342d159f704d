/*
 * checkpoint.h - copying the WAL back into the database off the writer.
 *
 * With SQLite's automatic checkpoint, the commit that crosses the WAL's
 * threshold copies pages into the database file and syncs it before its
 * events are answered: 15-25% of the writer's time in bench/storebench.
 * The writer turns that off and pokes this thread instead; the thread runs
 * PASSIVE checkpoints on its own connection, which never block the writer.
 * Because a checkpoint running beside a busy writer rarely catches up with
 * it, the writer still checkpoints itself when the WAL passes a hard bound
 * (checkpointer_after_commit()): the WAL stays bounded and that last
 * checkpoint only has the few pages the thread has not copied yet.  Its
 * sync of the database file is a stall of the live path (30-50 ms on the
 * bench machine), so the bound is large (wal_max_mb, 512 MiB by default):
 * at 1000 events/s the thread's passes let the WAL start over on their own
 * most of the time, and the writer's rarely.  While
 * the thread's own pass runs, the writer's gets SQLITE_BUSY and the WAL
 * keeps growing under a flood (235 MB seen after 200k events with 64
 * connections); checkpointer_limit_wal() makes SQLite cut the file back to
 * the bound when it starts over.
 */
#ifndef STORED_CHECKPOINT_H
#define STORED_CHECKPOINT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

struct checkpointer;

/* Opens its own connection to path and starts the thread, which runs at
 * nice value nice (prio.h; 0: the caller's), or NULL. */
struct checkpointer *checkpointer_start(const char *path, const char *synchronous, int nice);

/*
 * Called by the writer after each commit with the WAL's size in pages.
 * Wakes the thread each time the WAL has grown by CHECKPOINT_WAKE_PAGES
 * (checkpoint.c); returns
 * true when the WAL is past the hard bound and the writer should checkpoint
 * on its own connection now.  Never blocks.
 */
bool checkpointer_after_commit(struct checkpointer *cp, int wal_pages);

/*
 * Called by the writer when it has had nothing to commit for a while, with
 * the WAL's size in pages: wakes the thread if the WAL grew since its last
 * wake.  After a flood the WAL holds up to CHECKPOINT_WAKE_PAGES the thread
 * was never woken for; once it has copied them, the writer's next commit
 * starts the WAL over, instead of carrying it on towards the hard bound and
 * a checkpoint of the writer's own in the middle of the live traffic that
 * follows.  Never blocks.
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
