/*
 * writer.h - the one thread that writes to SQLite, committing in groups.
 *
 * It takes every write_job queued so far (up to commit_batch), applies them
 * in one transaction, commits, and only then answers each with EVENT_RESULT.
 * So an `OK true` always follows a durable commit, and one fsync covers a
 * batch.  The broadcaster gets the stored events in commit order a little
 * earlier: once the commit is in the WAL file, while its sync runs
 * (walbuf.h), so live deliveries do not wait for the disk; only a crash of
 * the machine within that sync can take back an event a subscriber saw,
 * and its author, who had no OK yet, sends it again.
 *
 * The operator's jobs come through the same queue (jobs.h): events to
 * import are ingested like any other, their outcomes going back to the
 * admin thread; other jobs (checkpoint, vacuum, ban, unban, delete; see
 * maint.h) end the batch being collected and run alone after it.
 */
#ifndef STORED_WRITER_H
#define STORED_WRITER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct stored;
struct stored_stats;

/* Opens the write connection and starts the thread, its id in *thread.
 * Returns 0 or ERR_DB / ERR_NOMEM. */
int writer_start(struct stored *s, pthread_t *thread);

/* Counts an answer that is not a plain acceptance by its prefix (relayctl
 * stats "rejects"); the rpc thread counts its refusals of ephemeral events
 * here too.  Atomic: any thread. */
void writer_count_reject(struct stored_stats *st, const char *message);

#endif
