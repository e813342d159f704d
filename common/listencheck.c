/* listencheck.c - listening again when nng's listener stops taking
 * connections (see listencheck.h). */
#include "listencheck.h"

#include <errno.h>
#include <nng/transport/ipc/ipc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "err.h"
#include "log.h"

/* How long a stop waits past a check's timeout before leaving the thread. */
#define LISTENCHECK_STOP_MARGIN_S 2
/* How often a waiting check looks again. */
#define LISTENCHECK_POLL_MS 10

struct check {
	struct listencheck *lc;
	nng_socket sock;
	char url[256];
	char what[64];
	uint16_t peer_proto;
	listencheck_relisten_fn relisten;
	void *arg;
	atomic_uint seen; /* pipes from this process the socket took */
};

struct listencheck {
	uint32_t interval_ms, timeout_ms;
	int n;
	struct check checks[LISTENCHECK_MAX];
	pthread_t thread;
	bool started, stop;
	bool abandoned; /* its thread did not stop in time: lc must stay */
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

struct listencheck *listencheck_new(uint32_t interval_ms, uint32_t timeout_ms)
{
	struct listencheck *lc = calloc(1, sizeof(*lc));

	if (!lc)
		return NULL;
	lc->interval_ms = interval_ms;
	lc->timeout_ms = timeout_ms;
	pthread_mutex_init(&lc->lock, NULL);
	if (deadline_cond_init(&lc->wake)) {
		pthread_mutex_destroy(&lc->lock);
		free(lc);
		return NULL;
	}
	return lc;
}

int listencheck_add(struct listencheck *lc, nng_socket sock, const char *url, uint16_t peer_proto,
		    listencheck_relisten_fn relisten, void *arg, const char *what)
{
	struct check *c;

	if (lc->n == LISTENCHECK_MAX || lc->started || strncmp(url, "ipc://", 6) != 0 ||
	    strlen(url + 6) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return ERR_INVAL;
	c = &lc->checks[lc->n++];
	c->lc = lc;
	c->sock = sock;
	snprintf(c->url, sizeof(c->url), "%s", url);
	snprintf(c->what, sizeof(c->what), "%s", what);
	c->peer_proto = peer_proto;
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

	deadline_after_ms(&until, CLOCK_MONOTONIC, (int)ms);
	pthread_mutex_lock(&lc->lock);
	if (!lc->stop)
		pthread_cond_timedwait(&lc->wake, &lc->lock, &until);
	go = !lc->stop;
	pthread_mutex_unlock(&lc->lock);
	return go;
}

/* Connects to c's path and sends our SP header; fd stays open (or -1). */
static int check_connect(const struct check *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval wait = { (time_t)(c->lc->timeout_ms / 1000),
				(suseconds_t)(c->lc->timeout_ms % 1000) * 1000 };
	uint8_t header[8] = { 0, 'S', 'P', 0, (uint8_t)(c->peer_proto >> 8), (uint8_t)c->peer_proto, 0, 0 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->url + strlen("ipc://"));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, header, sizeof(header), MSG_NOSIGNAL) != (ssize_t)sizeof(header)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* One check of c: the handshake on *fd, then the listening socket's own
 * report of the pipe.  True if it came within the timeout (or the check
 * could not be made here); *fd is left for the caller to close. */
static bool check_once(struct check *c, int *fd)
{
	int64_t deadline = deadline_now_ms() + c->lc->timeout_ms;
	unsigned base = atomic_load(&c->seen);
	uint8_t theirs[8];

	*fd = check_connect(c);
	if (*fd < 0)
		return errno == EMFILE || errno == ENFILE; /* out of descriptors: not its fault */
	/* Their header, within the timeout (SO_RCVTIMEO): the listener took
	 * the connection and answered the handshake. */
	if (recv(*fd, theirs, sizeof(theirs), MSG_WAITALL) != (ssize_t)sizeof(theirs) ||
	    theirs[1] != 'S' || theirs[2] != 'P')
		return false;
	/* The socket above it reports the pipe, unless the fault stopped it. */
	while (atomic_load(&c->seen) == base) {
		if (deadline_now_ms() >= deadline)
			return false;
		nanosleep(&(struct timespec){ 0, LISTENCHECK_POLL_MS * 1000000L }, NULL);
	}
	return true;
}

static void check_run(struct check *c)
{
	int fd;

	if (!check_once(c, &fd)) {
		log_warnx("%s (%s) took no connection within %u ms; listening again", c->what, c->url,
			  c->lc->timeout_ms);
		if (c->relisten(c->arg) == 0)
			atomic_fetch_add(&c->lc->relistens, 1);
		else
			log_warnx("%s: listening again failed; next check in %u ms", c->what,
				  c->lc->interval_ms);
	}
	/* Only now: both headers have crossed, or the listener we waited
	 * for is gone, so this close cannot stop a listener. */
	if (fd >= 0)
		close(fd);
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
	if (lc->started) {
		/* A check takes at most the timeout; past that margin the thread
		 * is stuck inside nng (listening again closes a listener, and
		 * nng 1.5.2 can hang there), and a stop must not wait for it. */
		struct timespec until; /* pthread_timedjoin_np() counts on CLOCK_REALTIME */

		deadline_after_ms(&until, CLOCK_REALTIME,
				  (int)lc->timeout_ms + LISTENCHECK_STOP_MARGIN_S * 1000);
		if (pthread_timedjoin_np(lc->thread, NULL, &until) != 0) {
			log_warnx("the listener check did not stop; leaving it");
			lc->abandoned = true;
		}
	}
	lc->started = false;
}

void listencheck_free(struct listencheck *lc)
{
	if (!lc)
		return;
	listencheck_stop(lc);
	if (lc->abandoned)
		return; /* its thread may still touch lc */
	pthread_mutex_destroy(&lc->lock);
	pthread_cond_destroy(&lc->wake);
	free(lc);
}
