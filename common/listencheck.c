/* listencheck.c - listening again when nng's listener stops taking
 * connections (see listencheck.h). */
#include "listencheck.h"

#include <nng/transport/ipc/ipc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

/* How often a waiting check looks again. */
#define LISTENCHECK_POLL_MS 10

struct check {
	struct listencheck *lc;
	nng_socket sock;
	char url[256];
	char what[64];
	listencheck_open_fn open_peer;
	listencheck_relisten_fn relisten;
	void *arg;
	atomic_uint seen;    /* pipes from this process the socket took */
	atomic_bool peer_up; /* the current check's own side is connected */
};

struct listencheck {
	uint32_t interval_ms, timeout_ms;
	int n;
	struct check checks[LISTENCHECK_MAX];
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	atomic_uint_fast64_t relistens;
};

bool listencheck_is_own_pipe(nng_pipe pipe)
{
	uint64_t pid;

	return nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_PID, &pid) == 0 && pid == (uint64_t)getpid();
}

/* On nng's thread: the checked socket took a pipe. */
static void check_listened_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct check *c = arg;

	(void)ev;
	if (listencheck_is_own_pipe(pipe))
		atomic_fetch_add(&c->seen, 1);
}

/* On nng's thread: the check's own socket has its pipe. */
static void check_dialed_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct check *c = arg;

	(void)pipe;
	(void)ev;
	atomic_store(&c->peer_up, true);
}

struct listencheck *listencheck_new(uint32_t interval_ms, uint32_t timeout_ms)
{
	struct listencheck *lc = calloc(1, sizeof(*lc));

	if (!lc)
		return NULL;
	lc->interval_ms = interval_ms;
	lc->timeout_ms = timeout_ms;
	pthread_mutex_init(&lc->lock, NULL);
	pthread_cond_init(&lc->wake, NULL);
	return lc;
}

int listencheck_add(struct listencheck *lc, nng_socket sock, const char *url,
		    listencheck_open_fn open_peer, listencheck_relisten_fn relisten, void *arg,
		    const char *what)
{
	struct check *c;

	if (lc->n == LISTENCHECK_MAX || lc->started)
		return ERR_INVAL;
	c = &lc->checks[lc->n++];
	c->lc = lc;
	c->sock = sock;
	snprintf(c->url, sizeof(c->url), "%s", url);
	snprintf(c->what, sizeof(c->what), "%s", what);
	c->open_peer = open_peer;
	c->relisten = relisten;
	c->arg = arg;
	nng_pipe_notify(sock, NNG_PIPE_EV_ADD_POST, check_listened_pipe, c);
	return 0;
}

/* Sleeps up to ms unless stopped; returns false once stopped. */
static bool listencheck_sleep(struct listencheck *lc, uint32_t ms)
{
	struct timespec until;
	bool go;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lc->lock);
	if (!lc->stop)
		pthread_cond_timedwait(&lc->wake, &lc->lock, &until);
	go = !lc->stop;
	pthread_mutex_unlock(&lc->lock);
	return go;
}

/* Dials c once and waits for both ends to report the pipe.  Returns true
 * if the socket took it (or the check could not be made),
 * false if its listener needs replacing; *peer is left open for the
 * caller to close after any replacement. */
static bool check_once(struct check *c, nng_socket *peer, bool *opened)
{
	unsigned base;

	*opened = false;
	if (c->open_peer(peer)) {
		log_warnx("listener check of %s: cannot open a socket", c->what);
		return true;
	}
	*opened = true;
	atomic_store(&c->peer_up, false);
	base = atomic_load(&c->seen);
	nng_pipe_notify(*peer, NNG_PIPE_EV_ADD_POST, check_dialed_pipe, c);
	/* One connection per check: no redial of our own while we wait. */
	nng_socket_set_ms(*peer, NNG_OPT_RECONNMINT, 60000);
	nng_socket_set_ms(*peer, NNG_OPT_RECONNMAXT, 60000);
	if (nng_dial(*peer, c->url, NULL, NNG_FLAG_NONBLOCK))
		return false;
	/* Not cut short by a stop: closing our end mid-handshake is the very
	 * thing that stops a listener. */
	for (uint32_t waited = 0; waited < c->lc->timeout_ms; waited += LISTENCHECK_POLL_MS) {
		if (atomic_load(&c->peer_up) && atomic_load(&c->seen) != base)
			return true;
		nanosleep(&(struct timespec){ 0, LISTENCHECK_POLL_MS * 1000000L }, NULL);
	}
	return atomic_load(&c->peer_up) && atomic_load(&c->seen) != base;
}

static void check_run(struct check *c)
{
	nng_socket peer;
	bool opened;
	bool ok = check_once(c, &peer, &opened);

	if (!ok) {
		log_warnx("%s (%s) took no connection within %u ms; listening again", c->what, c->url,
			  c->lc->timeout_ms);
		if (c->relisten(c->arg) == 0)
			atomic_fetch_add(&c->lc->relistens, 1);
		else
			log_warnx("%s: listening again failed; next check in %u ms", c->what,
				  c->lc->interval_ms);
	}
	/* Only now: our half of the handshake is done, or the listener we
	 * waited for is gone, so this close cannot stop a listener. */
	if (opened)
		nng_close(peer);
}

static void *listencheck_main(void *arg)
{
	struct listencheck *lc = arg;

	pthread_setname_np(pthread_self(), "listencheck");
	while (listencheck_sleep(lc, lc->interval_ms))
		for (int i = 0; i < lc->n; i++)
			check_run(&lc->checks[i]);
	return NULL;
}

int listencheck_start(struct listencheck *lc)
{
	if (pthread_create(&lc->thread, NULL, listencheck_main, lc))
		return ERR_NOMEM;
	lc->started = true;
	return 0;
}

uint64_t listencheck_relistens(const struct listencheck *lc)
{
	return lc ? atomic_load(&lc->relistens) : 0;
}

void listencheck_stop(struct listencheck *lc)
{
	if (!lc)
		return;
	pthread_mutex_lock(&lc->lock);
	lc->stop = true;
	pthread_cond_signal(&lc->wake);
	pthread_mutex_unlock(&lc->lock);
	if (lc->started)
		pthread_join(lc->thread, NULL);
	lc->started = false;
}

void listencheck_free(struct listencheck *lc)
{
	if (!lc)
		return;
	listencheck_stop(lc);
	pthread_mutex_destroy(&lc->lock);
	pthread_cond_destroy(&lc->wake);
	free(lc);
}
