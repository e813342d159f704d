/*
 * main.c - stored: the one process that owns the database and the
 * subscription index.
 *
 * Usage: stored [-c CONFIG] | stored --print-config[=markdown] | stored --version
 * It starts its threads (writer, broadcaster, query pool, rpc, admin), then
 * waits for a signal in the main thread.  SIGTERM/SIGINT stop it in order:
 * the writer drains and commits what it has and answers it, then the
 * sockets close.  Exit status 0 after a clean stop.
 */
#include <errno.h>
#include <nng/nng.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/slice.h"
#include "../common/listencheck.h"
#include "../common/config.h"
#include "../common/err.h"
#include "../common/peerlink.h"
#include "../common/log.h"
#include "../common/notify.h"
#include "../common/rundir.h"
#include "../common/version.h"
#include "admin.h"
#include "backup.h"
#include "bcast.h"
#include "db.h"
#include "manage.h"
#include "metrics.h"
#include "plugin.h"
#include "negsess.h"
#include "query.h"
#include "portlock.h"
#include "queue.h"
#include "turnqueue.h"
#include "reply.h"
#include "rpc.h"
#include "search_index.h"
#include "stored.h"
#include "writer.h"

#define STORED_MAX_QUERY_THREADS 64

struct stored_threads {
	pthread_t writer, bcast, rpc, admin;
	pthread_t query[STORED_MAX_QUERY_THREADS];
};

static void stored_usage(void)
{
	fprintf(stderr, "usage: stored [-c CONFIG] | stored --print-config[=markdown] | stored"
			" --version\n");
	exit(2);
}

static const char *stored_args(int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
			path = argv[++i];
		} else if (strcmp(argv[i], "--print-config") == 0) {
			config_write_sample(stdout);
			exit(0);
		} else if (strcmp(argv[i], "--version") == 0) {
			version_print(stdout, "stored");
			exit(0);
		} else if (strcmp(argv[i], "--print-config=markdown") == 0) {
			config_write_markdown(stdout); /* the README's table (make config-docs) */
			exit(0);
		} else {
			stored_usage();
		}
	}
	return path;
}

static void stored_init(struct stored *s, const char *config_path)
{
	char err[512];

	if (config_load(config_path, &s->cfg, err, sizeof(err)))
		fatalx("config: %s", err);
	log_init("stored", 0, (enum log_level)log_level_parse(s->cfg.log_level));
	log_set_format((enum log_format)log_format_parse(s->cfg.log_format));
	int lock = portlock_take((uint16_t)s->cfg.port); /* held until exit */
	if (lock < 0 && errno == EADDRINUSE)
		fatalx("another relay already serves port %u; not starting a second one that would"
		       " share it", s->cfg.port);
	if (lock < 0)
		fatalx("cannot take the lock for port %u: %s", s->cfg.port, strerror(errno));
	if (rundir_mkdirs(s->cfg.data_dir, 0755, NULL))
		fatalx("cannot create %s: %s", s->cfg.data_dir, strerror(errno));
	if (rundir_prepare(&s->cfg, true, err, sizeof(err)))
		fatalx("%s", err);
	snprintf(s->db_path, sizeof(s->db_path), "%s/relay.db", s->cfg.data_dir);
	search_index_path(s->search_path, sizeof(s->search_path), s->db_path);
	if (getrandom(&s->boot_id, sizeof(s->boot_id), 0) != sizeof(s->boot_id))
		s->boot_id = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	pthread_mutex_init(&s->workers_lock, NULL);
	if (workask_init(&s->ask))
		fatalx("cannot initialise the questions to the workers");
	if (search_watermark_init(&s->search) || visible_mark_init(&s->visible))
		fatalx("cannot initialise the search watermark or the visible mark");
	s->write_q = queue_new(65536);
	s->bcast_q = queue_new(262144);
	if (s->cfg.query_queue_per_conn <= s->cfg.max_subscriptions)
		log_warnx("query_queue_per_conn (%u) is not above max_subscriptions (%u): after a"
			  " restart of stored, a client's resumed subscriptions past it are closed",
			  s->cfg.query_queue_per_conn, s->cfg.max_subscriptions);
	s->query_q = turnqueue_new(s->cfg.query_queue_max, s->cfg.query_queue_per_conn,
				   s->cfg.query_turns != 0);
	if (!s->write_q || !s->bcast_q || !s->query_q)
		fatalx("out of memory");
	turnqueue_bound_running(s->query_q, s->cfg.query_threads_per_conn);
	if (s->cfg.query_threads_light >= s->cfg.query_threads && s->cfg.query_threads > 1)
		log_warnx("query_threads_light (%u) is not below query_threads (%u): %u kept",
			  s->cfg.query_threads_light, s->cfg.query_threads, s->cfg.query_threads - 1);
	turnqueue_keep_for_light(s->query_q, &(struct turn_reserve){
		s->cfg.query_threads, query_threads_kept(&s->cfg),
		(uint64_t)s->cfg.query_heavy_ms * 1000000, (uint64_t)QUERY_HEAVY_FOR_MS * 1000000,
		(uint64_t)QUERY_CHEAP_FOR_MS * 1000000 });
}

/*
 * SIGHUP: stored's threads read their settings once, so only the log level
 * changes live; config_keep_running() names every other changed key as
 * needing a restart (which loses nothing: see the README's durability
 * section).
 */
static void stored_reload(struct stored *s, const char *config_path)
{
	struct config next;
	char err[512];

	notify_send("RELOADING=1");
	if (config_load(config_path, &next, err, sizeof(err))) {
		log_warnx("reload refused, the running configuration stays: %s", err);
	} else {
		log_set_level((enum log_level)log_level_parse(next.log_level));
		log_set_format((enum log_format)log_format_parse(next.log_format));
		plugin_reload(s->plugin);
		snprintf(s->cfg.log_level, sizeof(s->cfg.log_level), "%s", next.log_level);
		snprintf(s->cfg.log_format, sizeof(s->cfg.log_format), "%s", next.log_format);
		if (!config_keep_running(&s->cfg, &next, CONFIG_FOR_STORED))
			log_info("configuration reloaded");
	}
	notify_send("READY=1");
}

static void *stored_rpc_main(void *arg)
{
	pthread_setname_np(pthread_self(), "rpc"); /* for top -H, perf */
	slice_set_this_thread(((struct stored *)arg)->cfg.request_slice_us);
	rpc_run(arg);
	return NULL;
}

/* nng 1.5.2 can stop a listener for good (common/listencheck.h): a thread
 * checks the three and listens again where one stopped. */
static void stored_check_listeners(struct stored *s)
{
	struct listencheck *lc = s->listencheck; /* made before any thread reads it */

	/* The check speaks ipc only; a tcp listener is the kernel's. */
	if ((peerlink_is_ipc(s->rpc_at.url) &&
	     listencheck_add(lc, s->rpc, s->rpc_at.url, LISTENCHECK_AS_REQ, rpc_relisten_requests, s,
			     "the request socket")) ||
	    (peerlink_is_ipc(s->pub_at.url) &&
	     listencheck_add(lc, s->pub, s->pub_at.url, LISTENCHECK_AS_SUB, rpc_relisten_deliveries,
			     s, "the delivery socket")) ||
	    listencheck_add(lc, s->admin, s->admin_at.url, LISTENCHECK_AS_REQ, admin_relisten, s,
			    "the admin socket") ||
	    listencheck_start(lc))
		fatalx("cannot start the listener check");
}

static void stored_start(struct stored *s, struct stored_threads *t)
{
	int64_t last_seq = 0;
	sqlite3 *db;
	size_t nquery = s->cfg.query_threads;

	if (nquery > STORED_MAX_QUERY_THREADS)
		nquery = STORED_MAX_QUERY_THREADS;
	if (db_init_library())
		log_warnx("SQLite was in use before its settings: memory statistics stay on");
	db_use_wal_buffer(s->cfg.db_wal_buffer != 0);
	db_use_cache_mb(s->cfg.db_cache_mb);
	db_use_read_map(s->cfg.db_read_map != 0);
	db_use_search_index(s->cfg.search ? s->search_path : NULL);
	/* Its copy is disk work beside the writer's: the writer's priority.
	 * Made first: the writer asks it whether a copy holds the WAL. */
	s->backup = backup_new(s->db_path, (int)s->cfg.writer_nice, BACKUP_STEP_PAGES);
	if (!s->backup)
		fatalx("out of memory");
	if (writer_start(s, &t->writer))
		fatalx("cannot open the database %s", s->db_path);
	if (s->cfg.plugin[0] && !(s->plugin = plugin_start(s)))
		fatalx("cannot start the write-policy plugin's thread");
	if (db_open(s->db_path, false, NULL, &db) || db_max_seq(db, &last_seq))
		fatalx("cannot read the database %s", s->db_path);
	db_close(db);
	visible_mark_advance(&s->visible, last_seq);
	if (bcast_start(s, last_seq, &t->bcast) || query_start(s, t->query, nquery) ||
	    negsess_start(s))
		fatalx("cannot start the broadcaster, the query or the negentropy threads");
	s->listencheck = listencheck_new(s->cfg.listen_check_ms, s->cfg.listen_check_timeout_ms);
	if (!s->listencheck || rpc_open(s) || admin_start(s, &t->admin))
		fatalx("cannot listen in %s", s->cfg.run_dir);
	stored_check_listeners(s);
	if (pthread_create(&t->rpc, NULL, stored_rpc_main, s))
		fatalx("cannot start the rpc thread");
	if (metrics_start(s))
		fatalx("cannot start the metrics thread");
	if (manage_open(s))
		fatalx("cannot open the internal management socket");
	slice_set_threads_named("nng:", s->cfg.request_slice_us); /* every socket is open */
	log_info("ready: database %s, sockets in %s", s->db_path, s->cfg.run_dir);
	if (!peerlink_is_ipc(s->rpc_at.url) || !peerlink_is_ipc(s->pub_at.url) ||
	    s->cfg.link_reply_url[0])
		log_info("workers dial %s, %s and %s plus their id", s->rpc_at.url, s->pub_at.url,
			 s->cfg.link_reply_url[0] ? s->cfg.link_reply_url : "(ipc replies)");
	notify_send("READY=1\nSTATUS=serving");
}

/* Drain the writer first so every queued event is committed and answered,
 * then close the sockets and let the other threads finish. */
static void stored_stop(struct stored *s, struct stored_threads *t)
{
	size_t nquery = s->cfg.query_threads;

	if (nquery > STORED_MAX_QUERY_THREADS)
		nquery = STORED_MAX_QUERY_THREADS;
	atomic_store(&s->stopping, true);
	notify_send("STOPPING=1");
	listencheck_stop(s->listencheck);
	plugin_stop(s->plugin); /* its accepted events reach the writer first */
	queue_close(s->write_q);
	pthread_join(t->writer, NULL);
	metrics_stop(s);
	manage_close(s);
	nng_close(s->rpc);
	pthread_join(t->rpc, NULL);
	queue_close(s->bcast_q);
	turnqueue_close(s->query_q);
	pthread_join(t->bcast, NULL);
	for (size_t i = 0; i < nquery; i++)
		pthread_join(t->query[i], NULL);
	negsess_stop(s); /* after the query threads, which hand it items */
	nng_close(s->pub);
	nng_close(s->admin);
	pthread_join(t->admin, NULL);
	backup_free(s->backup); /* a copy cut short leaves no file */
	reply_close_all(s);
	listencheck_free(s->listencheck); /* its sockets are closed */
	/* Every connection is closed now; the last were read-only. */
	db_finish_wal(s->db_path);
	db_finish_wal(s->search_path);
	plugin_free(s->plugin); /* nothing submits to it any more */
	queue_free(s->write_q);
	queue_free(s->bcast_q);
	turnqueue_free(s->query_q);
	search_watermark_destroy(&s->search);
	visible_mark_destroy(&s->visible);
	log_info("stopped");
}

int main(int argc, char **argv)
{
	static struct stored s;
	struct stored_threads threads;
	const char *config_path = stored_args(argc, argv);
	sigset_t set;
	int sig = 0;

	stored_init(&s, config_path);
	/* Threads inherit this mask, so only the main thread takes signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	stored_start(&s, &threads);
	while (sig != SIGINT && sig != SIGTERM) {
		if (sigwait(&set, &sig))
			break;
		if (sig == SIGHUP)
			stored_reload(&s, config_path);
	}
	stored_stop(&s, &threads);
	nng_fini(); /* lets nng's reaper free what closing pipes still held */
	return 0;
}
