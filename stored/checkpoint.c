/* checkpoint.c - the checkpoint thread (see checkpoint.h). */
#include "checkpoint.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/err.h"
#include "../common/log.h"
#include "db.h"
#include "../common/prio.h"

/* Pages the WAL grows by between two checkpoints (about 16 MiB).  A page
 * changed by many commits is copied once per checkpoint, so fewer, larger
 * checkpoints cost less in all; SQLite's default of 1000 measured ~20% more
 * writer time in bench/storebench. */
#define CHECKPOINT_WAKE_PAGES 4000
/* Past this (128 MiB of WAL with 8 KiB pages) the writer checkpoints
 * itself, unless checkpointer_limit_wal() sets another bound. */
#define CHECKPOINT_HARD_PAGES 16384
/* A WAL file starts with a 32-byte header; each frame is its page and a
 * 24-byte header. */
#define WAL_FILE_HEADER 32
#define WAL_FRAME_HEADER 24

struct checkpointer {
	sqlite3 *db;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool poked, stop;
	atomic_ulong runs;
	int poked_at; /* the WAL's size at the last poke (writer's thread only) */
	int hard_pages; /* the writer checkpoints itself past this (its thread only) */
	int nice;     /* the thread's nice value (prio.h) */
};

static void *checkpointer_main(void *arg)
{
	struct checkpointer *cp = arg;

	pthread_setname_np(pthread_self(), "checkpoint"); /* for top -H, perf */
	prio_set_this_thread(cp->nice);
	pthread_mutex_lock(&cp->lock);
	for (;;) {
		while (!cp->poked && !cp->stop)
			pthread_cond_wait(&cp->wake, &cp->lock);
		if (cp->stop)
			break;
		cp->poked = false;
		pthread_mutex_unlock(&cp->lock);
		int log_pages = 0, copied = 0;
		int rc = sqlite3_wal_checkpoint_v2(cp->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log_pages,
						   &copied);
		if (rc != SQLITE_OK && rc != SQLITE_BUSY)
			log_warnx("checkpoint: %s", sqlite3_errmsg(cp->db));
		atomic_fetch_add(&cp->runs, 1);
		pthread_mutex_lock(&cp->lock);
	}
	pthread_mutex_unlock(&cp->lock);
	return NULL;
}

struct checkpointer *checkpointer_start(const char *path, const char *synchronous, int nice)
{
	struct checkpointer *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->nice = nice;
	cp->hard_pages = CHECKPOINT_HARD_PAGES;
	pthread_mutex_init(&cp->lock, NULL);
	pthread_cond_init(&cp->wake, NULL);
	/* A writable connection: a checkpoint writes the database file.  It
	 * never writes a transaction, so it does not contend for the write
	 * lock. */
	if (db_open_checkpointer(path, synchronous, &cp->db) ||
	    pthread_create(&cp->thread, NULL, checkpointer_main, cp)) {
		db_close(cp->db);
		free(cp);
		return NULL;
	}
	return cp;
}

/* Wakes the thread for a WAL of wal_pages.  Without may_wait it gives up
 * rather than wait for the lock (a commit must not), and the next commit
 * tries again. */
static void checkpointer_poke(struct checkpointer *cp, int wal_pages, bool may_wait)
{
	if (may_wait)
		pthread_mutex_lock(&cp->lock);
	else if (pthread_mutex_trylock(&cp->lock))
		return;
	cp->poked = true;
	pthread_cond_signal(&cp->wake);
	pthread_mutex_unlock(&cp->lock);
	cp->poked_at = wal_pages;
}

/* Pages the WAL grew by since the thread was last woken. */
static int checkpointer_unwoken(struct checkpointer *cp, int wal_pages)
{
	if (wal_pages < cp->poked_at)
		cp->poked_at = 0; /* the WAL was reset: it starts over */
	return wal_pages - cp->poked_at;
}

bool checkpointer_idle_due(struct checkpointer *cp, int wal_pages)
{
	return checkpointer_unwoken(cp, wal_pages) > 0;
}

void checkpointer_idle(struct checkpointer *cp, int wal_pages)
{
	if (checkpointer_idle_due(cp, wal_pages))
		checkpointer_poke(cp, wal_pages, true);
}

/*
 * No wake within CHECKPOINT_WAKE_PAGES of the hard bound: that pass would
 * still run when the writer reaches the bound, its checkpoint would find
 * the thread busy, and the WAL would grow past the bound until the pass
 * ends.  The writer copies those pages itself instead.
 */
bool checkpointer_after_commit(struct checkpointer *cp, int wal_pages)
{
	if (checkpointer_unwoken(cp, wal_pages) >= CHECKPOINT_WAKE_PAGES &&
	    wal_pages <= cp->hard_pages - CHECKPOINT_WAKE_PAGES)
		checkpointer_poke(cp, wal_pages, false);
	return wal_pages >= cp->hard_pages;
}

int checkpointer_limit_wal(struct checkpointer *cp, sqlite3 *writer, int64_t max_bytes)
{
	int64_t page = 0, frames;
	char sql[64];

	if (db_page_size(writer, &page) || page <= 0)
		return ERR_DB;
	frames = (max_bytes - WAL_FILE_HEADER) / (page + WAL_FRAME_HEADER);
	if (frames <= CHECKPOINT_WAKE_PAGES || frames > INT32_MAX)
		return ERR_INVAL;
	snprintf(sql, sizeof(sql), "PRAGMA main.journal_size_limit=%lld",
		 (long long)(frames * (page + WAL_FRAME_HEADER) + WAL_FILE_HEADER));
	if (sqlite3_exec(writer, sql, NULL, NULL, NULL) != SQLITE_OK)
		return ERR_DB;
	cp->hard_pages = (int)frames;
	return 0;
}

void checkpointer_stop(struct checkpointer *cp)
{
	if (!cp)
		return;
	pthread_mutex_lock(&cp->lock);
	cp->stop = true;
	pthread_cond_signal(&cp->wake);
	pthread_mutex_unlock(&cp->lock);
	pthread_join(cp->thread, NULL);
	db_close(cp->db);
	pthread_mutex_destroy(&cp->lock);
	pthread_cond_destroy(&cp->wake);
	free(cp);
}

unsigned long checkpointer_runs(const struct checkpointer *cp)
{
	return atomic_load(&cp->runs);
}
