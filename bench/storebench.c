/*
 * storebench.c - stored's write path alone, without sockets or workers.
 *
 * Loads a JSONL event file, parses every event up front, then feeds them
 * through ingest_event() into a fresh database in transactions of --batch
 * events, exactly as stored's writer does (BEGIN IMMEDIATE, ingest each,
 * COMMIT).  It prints events/s and the CPU the process used, so the cost of
 * the schema, the commit batch size and the synchronous mode can be compared
 * without the rest of the relay in the measurement (the "commit batch size"
 * row of the design comparison in bench/RESULTS.md).
 *
 *   storebench --file F [--batch 64] [--sync full|normal] [--search 0|1]
 *              [--search-batch N] [--dir D] [--sql S]... [--checkpoint thread|inline]
 *              [--page-size N] [--wal-buffer 0|1] [--sizes 0|1]
 *
 * --search 1 (the default) runs stored's full-text indexer beside the
 * commits, as stored does (stored/search_index.h): its own thread and file,
 * batches of --search-batch events (default 4096) or what a second brought.
 * The RESULT line's search_catch_up_s is how long the index took, after the
 * last commit, to hold every event.
 *
 * --checkpoint thread (stored's way: stored/checkpoint.h) copies the WAL
 * back on another thread; inline leaves it to SQLite's automatic checkpoint
 * inside the commit.
 *
 * --sql runs S on the database after it is opened (a PRAGMA, an index to
 * drop), to measure a variant before changing stored itself.
 *
 * The SIZE line gives the database's size and the WAL pages (and bytes,
 * frame headers included) the writer wrote per event over the whole run;
 * --sizes 1 adds a BTREE line per table and index.
 *
 * SQLite is set up as stored sets it up (db_init_library); with the
 * environment variable STOREBENCH_MEMSTATUS set, its memory statistics stay
 * on, as they were before (bench/RESULTS.md, item 32).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../common/event.h"
#include "../common/json.h"
#include "../stored/checkpoint.h"
#include "../stored/db.h"
#include "../stored/ingest.h"
#include "../stored/search_index.h"
#include "../stored/sql.h"
#include "../stored/walbuf.h"
#include "evfile.h"

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int parse_all(const struct evfile *f, struct event *evs)
{
	char why[128];

	for (size_t i = 0; i < f->count; i++) {
		cJSON *obj = json_parse(f->lines[i].json, f->lines[i].len, false);

		if (!obj || event_parse(obj, NULL, &evs[i], why, sizeof(why))) {
			fprintf(stderr, "storebench: line %zu: %s\n", i + 1, obj ? why : "bad JSON");
			cJSON_Delete(obj);
			return -1;
		}
		cJSON_Delete(obj);
	}
	return 0;
}

static int wal_pages;
/* Pages the writer wrote to the WAL over the whole run. */
static int64_t wal_pages_total;

static int note_wal_pages(void *arg, sqlite3 *db, const char *name, int pages)
{
	wal_pages = pages;
	return SQLITE_OK;
}

/* What stored's writer does after a commit (stored/writer.c). */
static void after_commit(sqlite3 *db, struct checkpointer *cp)
{
	if (cp && checkpointer_after_commit(cp, wal_pages) &&
	    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) == SQLITE_OK)
		wal_pages = 0;
}

/* One line per tenth of the file: how the cost per event grows with the
 * database (pages written to the WAL and read past SQLite's cache per event). */
static void report_slice(sqlite3 *db, size_t done, size_t events, double *t_last, double *c_last)
{
	int cur, hi, writes = 0, misses = 0;
	double t = now_seconds(), c = cpu_seconds();

	if (sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1) == SQLITE_OK)
		writes = cur;
	wal_pages_total += writes;
	if (sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 1) == SQLITE_OK)
		misses = cur;
	printf("SLICE upto=%zu events_per_s=%.0f cpu_us_per_event=%.1f wal_pages_per_event=%.2f "
	       "cache_misses_per_event=%.2f\n",
	       done, (double)events / (t - *t_last), (c - *c_last) * 1e6 / (double)events,
	       (double)writes / (double)events, (double)misses / (double)events);
	fflush(stdout);
	*t_last = t;
	*c_last = c;
}

/* --search 1: the full-text index, written by its own thread. */
static struct search_watermark search_wm;

/* Not inlined, so that `valgrind --tool=callgrind --toggle-collect=run`
 * counts the writer's instructions alone (parsing the file excluded). */
__attribute__((noinline)) static int run(sqlite3 *db, struct ingest *in, struct checkpointer *cp, struct event *evs,
	       size_t n, size_t batch, size_t *stored)
{
	int64_t last_seq = 0;

	size_t slice = n / 10 > batch ? n / 10 : batch, next_report = slice, last_report = 0;
	double t_last = now_seconds(), c_last = cpu_seconds();

	for (size_t i = 0; i < n; i += batch) {
		size_t end = i + batch < n ? i + batch : n;

		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			return -1;
		for (size_t j = i; j < end; j++) {
			const char *why = NULL;
			int64_t seq;
			enum ingest_outcome o = ingest_event(in, &evs[j], &seq, &why);

			if (o == INGEST_FAILED)
				return -1;
			*stored += o == INGEST_STORED;
			if (o == INGEST_STORED)
				last_seq = seq;
		}
		if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
			return -1;
		search_watermark_committed(&search_wm, last_seq);
		after_commit(db, cp);
		if (end >= next_report || end == n) {
			report_slice(db, end, end - last_report, &t_last, &c_last);
			last_report = end;
			next_report = end + slice;
		}
	}
	return 0;
}

/* The database's size and, with --sizes 1, each table's and index's
 * (SQLite's dbstat), so a schema variant's bytes per event can be read. */
static void report_sizes(sqlite3 *db, size_t events, bool per_btree)
{
	int64_t pages = 0, free_pages = 0, page_size = 0;
	sqlite3_stmt *st;

	db_page_size(db, &page_size);
	sql_read_int(db, "PRAGMA page_count", &pages);
	sql_read_int(db, "PRAGMA freelist_count", &free_pages);
	printf("SIZE db_bytes=%lld db_bytes_per_event=%.0f free_pages=%lld wal_pages=%lld "
	       "wal_pages_per_event=%.3f wal_bytes_per_event=%.0f\n",
	       (long long)(pages * page_size), (double)(pages * page_size) / (double)events,
	       (long long)free_pages, (long long)wal_pages_total,
	       (double)wal_pages_total / (double)events,
	       (double)wal_pages_total * (double)(page_size + 24) / (double)events);
	if (!per_btree)
		return;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM tags WHERE NOT EXISTS"
			       " (SELECT 1 FROM events WHERE seq = tags.seq)", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		printf("ORPHANS tag_rows_without_event=%lld\n", (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	if ( sqlite3_prepare_v2(db, "SELECT name, count(*), sum(pgsize) FROM dbstat"
					     " GROUP BY name ORDER BY 3 DESC", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		printf("BTREE %s pages=%lld bytes_per_event=%.1f\n", sqlite3_column_text(st, 0),
		       (long long)sqlite3_column_int64(st, 1),
		       (double)sqlite3_column_int64(st, 2) / (double)events);
	sqlite3_finalize(st);
}

/* A page size only takes effect before the first table exists, so the file
 * is created here, ahead of db_open()'s schema. */
static int create_with_page_size(const char *path, int page_size)
{
	char sql[128];
	sqlite3 *db;
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA page_size=%d; CREATE TABLE storebench_init(x);"
		 " DROP TABLE storebench_init;", page_size);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	sqlite3_close(db);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' }, { "batch", required_argument, NULL, 'b' },
		{ "sync", required_argument, NULL, 's' }, { "search", required_argument, NULL, 'S' },
		{ "dir", required_argument, NULL, 'd' },  { "sql", required_argument, NULL, 'q' },
		{ "checkpoint", required_argument, NULL, 'c' },
		{ "page-size", required_argument, NULL, 'p' },
		{ "wal-buffer", required_argument, NULL, 'w' },
		{ "search-batch", required_argument, NULL, 'B' },
		{ "sizes", required_argument, NULL, 'z' }, { NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *sync = "full", *dir = "/tmp";
	size_t batch = 64, stored = 0, search_batch = 4096;
	int page_size = 0, search = 1, sizes = 0;
	bool checkpoint_thread = true, wal_buffer = true;
	struct search_index *search_index = NULL;
	char search_path[4200];
	double search_catch_up = 0;
	const char *extra_sql[16];
	int nextra = 0;
	struct evfile f = { 0 };
	char path[4096];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': file = optarg; break;
		case 'b': batch = strtoul(optarg, NULL, 10); break;
		case 's': sync = optarg; break;
		case 'S': search = atoi(optarg); break;
		case 'B': search_batch = strtoul(optarg, NULL, 10); break;
		case 'd': dir = optarg; break;
		case 'p': page_size = atoi(optarg); break;
		case 'z': sizes = atoi(optarg); break;
		case 'w': wal_buffer = atoi(optarg) != 0; break;
		case 'c': checkpoint_thread = strcmp(optarg, "inline") != 0; break;
		case 'q':
			if (nextra < 16)
				extra_sql[nextra++] = optarg;
			break;
		default: return 2;
		}
	}
	if (!file || !batch) {
		fprintf(stderr, "usage: storebench --file F [--batch N] [--sync full|normal] "
				"[--search 0|1] [--search-batch N] [--dir D]\n");
		return 2;
	}
	if (evfile_load(file, &f)) {
		fprintf(stderr, "storebench: cannot load %s: %s\n", file, strerror(errno));
		return 1;
	}
	struct event *evs = calloc(f.count, sizeof(*evs));
	if (!evs || parse_all(&f, evs))
		return 1;
	snprintf(path, sizeof(path), "%s/storebench-%d.db", dir, (int)getpid());
	snprintf(search_path, sizeof(search_path), "%s/storebench-%d-search.db", dir, (int)getpid());

	sqlite3 *db = NULL;
	struct ingest *in = NULL;
	if (getenv("STOREBENCH_MEMSTATUS") == NULL && db_init_library())
		return 1;
	if (page_size && create_with_page_size(path, page_size))
		return 1;
	db_use_wal_buffer(wal_buffer);
	if (db_open(path, true, sync, &db)) {
		fprintf(stderr, "storebench: cannot open %s\n", path);
		return 1;
	}
	if (!(in = ingest_new(db)) || search_watermark_init(&search_wm) ||
	    (search && (!(search_index = search_index_open(path, search_path, &search_wm,
							  (uint32_t)search_batch, 1000)) ||
			search_index_track_deletions(db, &search_wm) ||
			search_index_start(search_index, 0)))) {
		fprintf(stderr, "storebench: cannot prepare statements or the search index\n");
		return 1;
	}
	struct checkpointer *cp = NULL;
	if (checkpoint_thread) {
		if (!(cp = checkpointer_start(path, sync, 0)))
			return 1;
		sqlite3_wal_hook(db, note_wal_pages, NULL);
	}
	/* After every connection is open, so nothing runs against a schema
	 * that is still being set up. */
	for (int i = 0; i < nextra; i++) {
		if (sqlite3_exec(db, extra_sql[i], NULL, NULL, NULL) != SQLITE_OK) {
			fprintf(stderr, "storebench: %s: %s\n", extra_sql[i], sqlite3_errmsg(db));
			return 1;
		}
	}
	double t0 = now_seconds(), c0 = cpu_seconds();
	int rc = run(db, in, cp, evs, f.count, batch, &stored);

	if (rc)
		fprintf(stderr, "storebench: %s (%d)\n", sqlite3_errmsg(db), sqlite3_extended_errcode(db));
	double t = now_seconds() - t0, cpu = cpu_seconds() - c0;
	int64_t upto = 0;

	if (search_index && !search_watermark_want(&search_wm, &upto) &&
	    !search_watermark_wait(&search_wm, upto, 600000))
		fprintf(stderr, "storebench: the search index did not catch up in 10 minutes\n");
	search_catch_up = now_seconds() - t0 - t;
	if (rc == 0)
		report_sizes(db, f.count, sizes != 0);
	checkpointer_stop(cp);
	search_index_close(search_index);
	ingest_free(in);
	db_close(db);
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		char p[4300];

		snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s%s", search_path, suffixes[i]);
		unlink(p);
	}
	if (rc) {
		fprintf(stderr, "storebench: the write path failed\n");
		return 1;
	}
	struct walbuf_counts wc;

	walbuf_counts(&wc);
	printf("RESULT events=%zu stored=%zu batch=%zu sync=%s search=%d checkpoint=%s wal_buffer=%d "
	       "wal_writes_asked=%llu wal_writes_done=%llu seconds=%.3f "
	       "events_per_s=%.0f cpu_us_per_event=%.1f search_catch_up_s=%.3f\n",
	       f.count, stored, batch, sync, search, checkpoint_thread ? "thread" : "inline",
	       wal_buffer, (unsigned long long)wc.writes_asked, (unsigned long long)wc.writes_done, t,
	       (double)f.count / t,
	       cpu * 1e6 / (double)f.count, search_catch_up);
	for (size_t i = 0; i < f.count; i++)
		event_free(&evs[i]);
	free(evs);
	evfile_free(&f);
	return 0;
}
