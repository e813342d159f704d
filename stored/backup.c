/* backup.c - a consistent copy of relay.db while the relay runs (see backup.h). */
#include "backup.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../common/prio.h"

#define BACKUP_PARTIAL ".partial"

struct backup {
	pthread_mutex_t lock;     /* guards st, began_us and thread_live */
	struct backup_status st;
	int64_t began_us;         /* deadline_now_us() when it began */
	bool thread_live;         /* a copy thread to join */
	pthread_t thread;
	atomic_bool stop;
	atomic_bool holding;      /* backup_holds_wal() */
	char db_path[CONFIG_PATH_MAX + 32];
	char partial[CONFIG_PATH_MAX + sizeof(BACKUP_PARTIAL)];
	int nice, step_pages;
};

/* Seconds since began_us on the monotonic clock. */
static double backup_seconds_since(int64_t began_us)
{
	return (double)(deadline_now_us() - began_us) / 1e6;
}

struct backup *backup_new(const char *db_path, int nice, int step_pages)
{
	struct backup *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	pthread_mutex_init(&b->lock, NULL);
	snprintf(b->db_path, sizeof(b->db_path), "%s", db_path);
	b->nice = nice;
	b->step_pages = step_pages > 0 ? step_pages : 1024;
	return b;
}

/* The directory part of path, resolved (symlinks, ".."), into out; false if
 * it cannot be. */
static bool backup_real_dir(const char *path, char out[PATH_MAX])
{
	char dir[CONFIG_PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s", path);
	return realpath(dirname(dir), out) != NULL;
}

/* The checks of backup_start() on dest; 0 or ERR_INVAL with why. */
static int backup_check_dest(const struct backup *b, const char *dest, char *why, size_t why_len)
{
	char dir[PATH_MAX], data_dir[PATH_MAX];
	struct stat st;

	if (dest[0] != '/' || strlen(dest) + sizeof(BACKUP_PARTIAL) > CONFIG_PATH_MAX) {
		snprintf(why, why_len, "the backup's path must be absolute and at most %d bytes",
			 (int)(CONFIG_PATH_MAX - sizeof(BACKUP_PARTIAL)));
		return ERR_INVAL;
	}
	if (!backup_real_dir(dest, dir) || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "the directory of %s is not one stored can reach", dest);
		return ERR_INVAL;
	}
	/* Names there belong to SQLite and stored (relay.db-wal, search.db). */
	if (backup_real_dir(b->db_path, data_dir) && strcmp(dir, data_dir) == 0) {
		snprintf(why, why_len, "a backup does not go into the data directory %s itself; use"
			 " a directory of its own", data_dir);
		return ERR_INVAL;
	}
	if (lstat(dest, &st) == 0) {
		snprintf(why, why_len, "%s exists already; a backup never overwrites a file", dest);
		return ERR_INVAL;
	}
	if (errno != ENOENT) {
		snprintf(why, why_len, "cannot look at %s: %s", dest, strerror(errno));
		return ERR_INVAL;
	}
	return 0;
}

static void backup_progress(struct backup *b, sqlite3_backup *bk)
{
	pthread_mutex_lock(&b->lock);
	b->st.pages_total = (uint64_t)sqlite3_backup_pagecount(bk);
	b->st.pages_done = b->st.pages_total - (uint64_t)sqlite3_backup_remaining(bk);
	pthread_mutex_unlock(&b->lock);
}

/* Opens the snapshot: a read transaction held until the copy ends, so
 * every backup step reads the same commit; notes what it holds. */
static int backup_snapshot(struct backup *b, sqlite3 *src, char *why, size_t why_len)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_exec(src, "BEGIN", NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(src, "SELECT count(*), coalesce(max(seq), 0) FROM events", -1,
					&st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		pthread_mutex_lock(&b->lock);
		b->st.events = (uint64_t)sqlite3_column_int64(st, 0);
		b->st.max_seq = (uint64_t)sqlite3_column_int64(st, 1);
		pthread_mutex_unlock(&b->lock);
	} else {
		snprintf(why, why_len, "cannot read the database: %s", sqlite3_errmsg(src));
		rc = SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : ERR_DB;
}

/* Copies every page of src into dst, step by step; 0, or ERR_DB /
 * ERR_CLOSED (stopped) with why. */
static int backup_pages(struct backup *b, sqlite3 *src, sqlite3 *dst, char *why, size_t why_len)
{
	sqlite3_backup *bk = sqlite3_backup_init(dst, "main", src, "main");
	int rc = SQLITE_OK;

	if (!bk) {
		snprintf(why, why_len, "cannot start the copy: %s", sqlite3_errmsg(dst));
		return ERR_DB;
	}
	while (!atomic_load(&b->stop)) {
		rc = sqlite3_backup_step(bk, b->step_pages);
		backup_progress(b, bk);
		if (rc == SQLITE_DONE)
			break;
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
			usleep(10000);
			continue;
		}
		if (rc != SQLITE_OK)
			break;
	}
	/* The copy's write transaction spans every step and is committed by
	 * the step that returns DONE; finishing earlier rolls it back. */
	if (sqlite3_backup_finish(bk) == SQLITE_OK && rc == SQLITE_DONE)
		return 0;
	if (atomic_load(&b->stop)) {
		snprintf(why, why_len, "stored stopped before the copy was complete");
		return ERR_CLOSED;
	}
	snprintf(why, why_len, "the copy failed: %s", sqlite3_errstr(rc));
	return ERR_DB;
}

/* Gives the partial file its final name, never over a file that appeared
 * there while the copy ran: a hard link where the filesystem has them, else
 * a rename that refuses to replace. */
static int backup_name(const char *partial, const char *dest)
{
	if (link(partial, dest) == 0) {
		unlink(partial); /* the copy is named: a leftover name is no failure */
		return 0;
	}
	if (errno != EPERM && errno != EOPNOTSUPP)
		return ERR_IO;
	return renameat2(AT_FDCWD, partial, AT_FDCWD, dest, RENAME_NOREPLACE) == 0 ? 0 : ERR_IO;
}

/* Makes the finished copy durable under its final name. */
static int backup_publish(struct backup *b, const char *dest, char *why, size_t why_len)
{
	char dir[CONFIG_PATH_MAX];
	int fd = open(b->partial, O_RDONLY | O_CLOEXEC), dfd;

	if (fd < 0 || fsync(fd)) {
		snprintf(why, why_len, "cannot sync %s: %s", b->partial, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ERR_IO;
	}
	close(fd);
	if (backup_name(b->partial, dest)) {
		snprintf(why, why_len, "cannot name the copy %s: %s", dest, strerror(errno));
		return ERR_IO;
	}
	snprintf(dir, sizeof(dir), "%s", dest);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/*
 * While the copy held its snapshot, no checkpoint could copy the WAL past
 * it, and the WAL grew by everything committed meanwhile (past wal_max_mb
 * on a busy relay).  The writer skips its own checkpoints while
 * backup_holds_wal(); here, off the live path, that backlog is copied into
 * the database before the writer checkpoints again.
 */
static void backup_checkpoint(struct backup *b)
{
	sqlite3 *db = NULL;
	int log_pages = 0, copied = 0;

	/* A connection knows its database is in WAL mode once it has read it. */
	if (sqlite3_open_v2(b->db_path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) == SQLITE_OK &&
	    sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, &log_pages,
				      &copied) == SQLITE_OK) {
		log_debug("backup: WAL checkpointed after the copy (%d of %d pages)", copied,
			  log_pages);
		pthread_mutex_lock(&b->lock);
		b->st.wal_checkpointed = copied > 0 ? (uint64_t)copied : 0;
		pthread_mutex_unlock(&b->lock);
	}
	sqlite3_close(db);
	atomic_store(&b->holding, false);
}

/* Opens path with flags into *db; 0, or ERR_DB with why. */
static int backup_open(const char *path, int flags, sqlite3 **db, char *why, size_t why_len)
{
	if (sqlite3_open_v2(path, db, flags, NULL) == SQLITE_OK)
		return 0;
	snprintf(why, why_len, "cannot open %s: %s", path, sqlite3_errmsg(*db));
	return ERR_DB;
}

static int backup_copy(struct backup *b, const char *dest, char *why, size_t why_len)
{
	sqlite3 *src = NULL, *dst = NULL;
	int rc = backup_open(b->db_path, SQLITE_OPEN_READONLY, &src, why, why_len);

	if (rc == 0)
		rc = backup_open(b->partial, SQLITE_OPEN_READWRITE, &dst, why, why_len);
	if (rc == 0) {
		sqlite3_busy_timeout(src, 5000);
		rc = backup_snapshot(b, src, why, why_len);
	}
	if (rc == 0 && atomic_load(&b->stop)) {
		snprintf(why, why_len, "stored stopped before the copy began");
		rc = ERR_CLOSED;
	}
	if (rc == 0)
		rc = backup_pages(b, src, dst, why, why_len);
	sqlite3_close(src); /* the read transaction ends with it */
	backup_checkpoint(b);
	if (sqlite3_close(dst) != SQLITE_OK && rc == 0) {
		snprintf(why, why_len, "cannot finish %s", b->partial);
		rc = ERR_DB;
	}
	if (rc == 0)
		rc = backup_publish(b, dest, why, why_len);
	return rc;
}

static void *backup_main(void *arg)
{
	struct backup *b = arg;
	char dest[CONFIG_PATH_MAX], why[256] = "";
	char journal[sizeof(b->partial) + 8];
	int rc;

	pthread_setname_np(pthread_self(), "backup");
	prio_set_this_thread(b->nice);
	pthread_mutex_lock(&b->lock);
	snprintf(dest, sizeof(dest), "%s", b->st.path);
	pthread_mutex_unlock(&b->lock);
	rc = backup_copy(b, dest, why, sizeof(why));
	if (rc) {
		snprintf(journal, sizeof(journal), "%s-journal", b->partial);
		unlink(b->partial);
		unlink(journal);
		log_warnx("backup to %s failed: %s", dest, why);
	}
	pthread_mutex_lock(&b->lock);
	b->st.state = rc ? BACKUP_FAILED : BACKUP_DONE;
	b->st.seconds = backup_seconds_since(b->began_us);
	snprintf(b->st.error, sizeof(b->st.error), "%s", why);
	if (rc == 0) {
		struct stat st;

		b->st.bytes = stat(dest, &st) == 0 ? (uint64_t)st.st_size : 0;
		log_info("backup to %s done: %llu events, %llu bytes in %.1f s", dest,
			 (unsigned long long)b->st.events, (unsigned long long)b->st.bytes,
			 b->st.seconds);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

int backup_start(struct backup *b, const char *dest, char *why, size_t why_len)
{
	int fd, rc = 0;

	pthread_mutex_lock(&b->lock);
	if (b->st.state == BACKUP_RUNNING) {
		snprintf(why, why_len, "a backup to %s is running", b->st.path);
		rc = ERR_FULL;
	}
	if (rc == 0)
		rc = backup_check_dest(b, dest, why, why_len);
	if (rc == 0) {
		snprintf(b->partial, sizeof(b->partial), "%s" BACKUP_PARTIAL, dest);
		/* Taken here, so two starts cannot share it and an old one is
		 * never written over. */
		fd = open(b->partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			snprintf(why, why_len, "cannot create %s: %s", b->partial, strerror(errno));
			rc = ERR_INVAL;
		} else {
			close(fd);
		}
	}
	if (rc == 0 && b->thread_live) {
		pthread_join(b->thread, NULL); /* the last one, finished */
		b->thread_live = false;
	}
	if (rc == 0) {
		memset(&b->st, 0, sizeof(b->st));
		b->st.state = BACKUP_RUNNING;
		snprintf(b->st.path, sizeof(b->st.path), "%s", dest);
		b->began_us = deadline_now_us();
		atomic_store(&b->stop, false);
		atomic_store(&b->holding, true);
		if (pthread_create(&b->thread, NULL, backup_main, b)) {
			atomic_store(&b->holding, false);
			unlink(b->partial);
			b->st.state = BACKUP_FAILED;
			snprintf(why, why_len, "cannot start the backup's thread");
			snprintf(b->st.error, sizeof(b->st.error), "%s", why);
			rc = ERR_NOMEM;
		} else {
			b->thread_live = true;
		}
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}

bool backup_holds_wal(struct backup *b)
{
	return b && atomic_load(&b->holding);
}

void backup_status(struct backup *b, struct backup_status *out)
{
	pthread_mutex_lock(&b->lock);
	*out = b->st;
	if (out->state == BACKUP_RUNNING)
		out->seconds = backup_seconds_since(b->began_us);
	pthread_mutex_unlock(&b->lock);
}

void backup_free(struct backup *b)
{
	bool join;

	if (!b)
		return;
	atomic_store(&b->stop, true);
	pthread_mutex_lock(&b->lock);
	join = b->thread_live;
	pthread_mutex_unlock(&b->lock);
	if (join)
		pthread_join(b->thread, NULL);
	pthread_mutex_destroy(&b->lock);
	free(b);
}
