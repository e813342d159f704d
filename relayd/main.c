/*
 * main.c - relayd: one websocket worker.
 *
 * Usage: relayd [-c CONFIG] [-i N]   (N: this worker's id, 1 by default)
 * Several workers share the port (SO_REUSEPORT) and all talk to one stored.
 * Signals are taken by a dedicated thread with sigwait(); it sets the stop
 * flag and wakes the service thread, which then shuts down in order.
 */
#include <libwebsockets.h>
#include <nng/nng.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../common/deadline.h"
#include "../common/slice.h"
#include "../common/config.h"
#include "../common/event_sig.h"
#include "../common/log.h"
#include "../common/notify.h"
#include "../common/rundir.h"
#include "../common/version.h"
#include "conn.h"
#include "evloop.h"
#include "ingress.h"
#include "iplimit.h"
#include "link.h"
#include "mailbox.h"
#include "nip11.h"
#include "nip86.h"
#include "policy.h"
#include "reload.h"
#include "relayd.h"
#include "replay.h"
#include "send.h"
#include "service.h"
#include "ws.h"
#include "wsext.h"

/* main.c's own state around the worker's context. */
struct worker {
	struct relayd r;
	lws_sorted_usec_list_t tick;      /* the once-a-second timer */
	lws_sorted_usec_list_t link_tick; /* link_watch's, every LINK_WATCH_MS */
	atomic_bool stopped;              /* main finished its orderly shutdown */
	_Atomic(const char *) stop_phase; /* what main is doing while stopping */
};

static void relayd_usage(void)
{
	fprintf(stderr, "usage: relayd [-c CONFIG] [-i INSTANCE] | relayd --version\n");
	exit(2);
}

static void relayd_args(int argc, char **argv, const char **config, int *instance)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
			*config = argv[++i];
		} else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
			*instance = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--version") == 0) {
			version_print(stdout, "relayd");
			exit(0);
		} else {
			relayd_usage();
		}
	}
	if (*instance < 1 || *instance > 255) {
		fprintf(stderr, "relayd: the instance must be 1 to 255\n");
		exit(2);
	}
}

static void relayd_tick(lws_sorted_usec_list_t *sul)
{
	struct worker *w = lws_container_of(sul, struct worker, tick);

	service_tick(&w->r);
	lws_sul_schedule(w->r.lws, 0, &w->tick, relayd_tick, LWS_US_PER_SEC);
}

static void relayd_link_tick(lws_sorted_usec_list_t *sul)
{
	struct worker *w = lws_container_of(sul, struct worker, link_tick);

	link_watch(&w->r, deadline_now_ms());
	lws_sul_schedule(w->r.lws, 0, &w->link_tick, relayd_link_tick,
			 LINK_WATCH_MS * LWS_US_PER_MS);
}

/* A worker holds nothing durable, so a shutdown that stalls is cut short
 * rather than left to systemd's kill: wait RELAYD_STOP_MS for main, then
 * name the phase it stalled in and exit. */
#define RELAYD_STOP_MS 4000

static void relayd_watch_stop(struct worker *w)
{
	struct timespec tick = { 0, 50 * 1000000L };

	for (int waited = 0; waited < RELAYD_STOP_MS; waited += 50) {
		if (atomic_load(&w->stopped))
			return;
		nanosleep(&tick, NULL);
	}
	log_warnx("shutdown stalled while %s; exiting without finishing it",
		  atomic_load(&w->stop_phase));
	_exit(0);
}

static void *relayd_signals(void *arg)
{
	struct worker *w = arg;
	struct relayd *r = &w->r;
	sigset_t set;
	int sig = 0;

	pthread_setname_np(pthread_self(), "signals"); /* for top -H, perf */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	while (sigwait(&set, &sig) == 0) {
		if (sig == SIGHUP) {
			struct mail *m = mail_new(MAIL_RELOAD, 0);

			if (m)
				mailbox_post(r->mailbox, m);
			continue;
		}
		atomic_store(&r->stopping, true);
		lws_cancel_service(r->lws);
		relayd_watch_stop(w);
		break;
	}
	return NULL;
}

static void relayd_init(struct relayd *r, const char *config, int instance)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	char err[512];

	if (!cfg)
		fatalx("out of memory");
	if (config_load(config, cfg, err, sizeof(err)))
		fatalx("config: %s", err);
	r->service = service_new(r);
	r->send = send_batch_new();
	r->replay = replay_new();
	r->policy = policy_new();
	if (!r->service || !r->send || !r->replay || !r->policy)
		fatalx("out of memory");
	atomic_store(&r->cfg_now, cfg);
	r->config_path = config;
	r->instance = instance;
	log_init("relayd", instance, (enum log_level)log_level_parse(relayd_cfg(r)->log_level));
	log_set_format((enum log_format)log_format_parse(relayd_cfg(r)->log_format));
	if (rundir_prepare(cfg, false, err, sizeof(err)))
		fatalx("%s", err);
	reload_derive(r);
	lws_set_log_level(LLL_ERR, NULL);
	/* The fallback's bits are spread (Fibonacci hashing): the top ones
	 * seed the connection ids below. */
	if (getrandom(&r->boot_id, sizeof(r->boot_id), 0) != sizeof(r->boot_id))
		r->boot_id = ((uint64_t)getpid() << 32 ^ (uint64_t)time(NULL)) * 0x9e3779b97f4a7c15ull;
	r->started_at = (uint64_t)time(NULL);
	if (getrandom(r->auth_secret, sizeof(r->auth_secret), 0) != sizeof(r->auth_secret))
		fatalx("no randomness for NIP-42 challenges");
	if (nip11_build(r))
		fatalx("the NIP-11 document does not fit; shorten relay_description");
	/* 20 random bits: ids stay below 2^52, exact as JSON numbers (relayctl
	 * subs), and a restarted worker's rarely meet its predecessor's. */
	r->conns = conn_table_new((uint32_t)(r->boot_id >> 44));
	r->iplimit = iplimit_new(relayd_cfg(r));
	r->nip86 = nip86_new();
	if (!r->conns || !r->iplimit || !r->nip86 || wsext_init(r))
		fatalx("out of memory");
}

static void relayd_start(struct worker *w)
{
	struct relayd *r = &w->r;

	r->loop = evloop_new();
	if (!r->loop)
		fatalx("cannot create the event loop");
	r->lws = ws_create(r);
	if (!r->lws)
		fatalx("cannot listen on %s:%u", relayd_cfg(r)->bind, relayd_cfg(r)->port);
	r->mailbox = mailbox_new(r->lws);
	r->ingress = r->mailbox ? ingress_start(r) : NULL;
	if (!r->ingress)
		fatalx("cannot start the ingress threads");
	if (link_open(r))
		fatalx("cannot open the sockets to stored in %s", relayd_cfg(r)->run_dir);
	lws_sul_schedule(r->lws, 0, &w->tick, relayd_tick, LWS_US_PER_SEC);
	lws_sul_schedule(r->lws, 0, &w->link_tick, relayd_link_tick, LINK_WATCH_MS * LWS_US_PER_MS);
	/* This thread runs the event loop; nng's threads exist once the
	 * sockets are open.  The lanes, started before, keep their slice. */
	slice_set_this_thread(relayd_cfg(r)->request_slice_us);
	slice_set_threads_named("nng:", relayd_cfg(r)->request_slice_us);
	log_info("bound %s port %u (%s); accepting once stored answers", relayd_cfg(r)->bind,
		 relayd_cfg(r)->port, r->relay_url);
}

int main(int argc, char **argv)
{
	static struct worker w;
	struct relayd *r = &w.r;
	const char *config = NULL;
	int instance = 1;
	pthread_t signals;
	sigset_t set;

	relayd_args(argc, argv, &config, &instance);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	relayd_init(r, config, instance);
	relayd_start(&w);
	if (pthread_create(&signals, NULL, relayd_signals, &w))
		fatalx("cannot start the signal thread");
	atomic_store(&w.stop_phase, "leaving the event loop");
	evloop_run(r->loop);
	notify_send("STOPPING=1");
	/* Stop the producers of mail before the event loop they wake goes away; stored
	 * drops this worker's subscriptions when its pipe closes. */
	atomic_store(&w.stop_phase, "stopping the ingress lanes");
	ingress_stop(r->ingress);
	r->ingress = NULL; /* connections closed below must not reach it */
	atomic_store(&w.stop_phase, "closing the sockets to stored");
	link_close(r);
	atomic_store(&w.stop_phase, "closing the connections");
	lws_context_destroy(r->lws);
	evloop_free(r->loop);
	atomic_store(&w.stop_phase, "freeing memory");
	mailbox_free(r->mailbox);
	link_free(r);
	buf_free(&r->metrics_text);
	buf_free(&r->stats_json);
	conn_table_free(r->conns);
	send_batch_free(r->send);
	wsext_free(r);
	service_free(r->service);
	replay_free(r->replay);
	free((void *)relayd_cfg(r));
	free((void *)r->cfg_retired);
	iplimit_free(r->iplimit);
	nip86_free(r->nip86);
	policy_free(r->policy);
	log_info("stopped");
	atomic_store(&w.stopped, true);
	pthread_join(signals, NULL);
	/* nng tears pipes down on its own reaper thread after nng_close(): a
	 * message still in a closing pipe is freed there, so wait for it
	 * rather than exit with it held (LeakSanitizer reported one in CI). */
	nng_fini();
	return 0;
}
