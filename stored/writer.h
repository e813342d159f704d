/*
 * writer.h - the one thread that writes to SQLite, committing in groups.
 *
 * It takes every write_job queued so far (up to commit_batch), applies them
 * in one transaction, commits, and only then answers each with EVENT_RESULT
 * and hands each stored event to the broadcaster in commit order.  So an
 * `OK true` always follows a durable commit, and one fsync covers a batch.
 *
 * The operator's jobs come through the same queue (jobs.h): events to
 * import are ingested like any other, their outcomes going back to the
 * admin thread; other jobs (checkpoint, vacuum, ban, unban, delete; see
 * maint.h) end the batch being collected and run alone after it.
 */
#ifndef STORED_WRITER_H
#define STORED_WRITER_H

#include <pthread.h>

struct stored;

/* Opens the write connection and starts the thread.  Returns 0 or ERR_DB /
 * ERR_NOMEM. */
int writer_start(struct stored *s, pthread_t *thread);

#endif
