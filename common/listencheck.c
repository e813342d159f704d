/* listencheck.c - listening again when nng's listener stops taking
 * connections (see listencheck.h). */
#include "listencheck.h"

#include <errno.h>
#include <poll.h>
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

/* What one check found. */
enum check_result {
	CHECK_TAKEN,  /* the socket took the connection: healthy */
	CHECK_GONE,   /* nothing listens at the path (its file was removed, say) */
	CHECK_SILENT, /* connected, but no handshake came back: busy, or accepting no more */
	CHECK_STUCK,  /* handshake answered, and the socket never took the pipe: the fault */
};

struct check {
	struct listencheck *lc;
	nng_socket sock;
	char url[256];
	char what[64];
	uint16_t peer_proto;
	listencheck_relisten_fn relisten;
	void *arg;
	atomic_uint seen; /* pipes from this process the socket took */
	unsigned silent;  /* CHECK_SILENT in a row */
	/* Connections of silent checks that nothing has answered yet: closing
	 * one before the listener's header came is what causes the fault, so
	 * each is kept until it is answered or its listener is replaced. */
	int held[LISTENCHECK_SILENT_CHECKS];
	int nheld;
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
 * report of the pipe, each within the timeout.  *fd is left for the caller;
 * *unanswered says the listener has sent nothing on it yet. */
static enum check_result check_once(struct check *c, int *fd, bool *unanswered)
{
	int64_t deadline;
	ssize_t got;
	unsigned base = atomic_load(&c->seen);
	uint8_t theirs[8];

	*unanswered = false;
	*fd = check_connect(c);
	if (*fd < 0)
		return errno == EMFILE || errno == ENFILE ? CHECK_TAKEN /* out of descriptors: not its fault */
							 : CHECK_GONE;
	/* Their header, within the timeout (SO_RCVTIMEO): the listener took
	 * the connection and answered the handshake. */
	got = recv(*fd, theirs, sizeof(theirs), MSG_WAITALL);
	*unanswered = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	if (got != (ssize_t)sizeof(theirs) || theirs[1] != 'S' || theirs[2] != 'P')
		return CHECK_SILENT;
	/* The socket above it reports the pipe, unless the fault stopped it. */
	deadline = deadline_now_ms() + c->lc->timeout_ms;
	while (atomic_load(&c->seen) == base) {
		if (deadline_now_ms() >= deadline)
			return CHECK_STUCK;
		nanosleep(&(struct timespec){ 0, LISTENCHECK_POLL_MS * 1000000L }, NULL);
	}
	return CHECK_TAKEN;
}

/* Whether what a check found calls for a new listener.  A stuck socket
 * (the fault's own sign) or a missing path does at once.  A silent one
 * does only after LISTENCHECK_SILENT_CHECKS in a row: the transport
 * answers the handshake on nng's threads even when the fault has struck,
 * so silence is most likely a process too busy to answer within the
 * timeout, and replacing its listener would only drop its live pipes. */
static bool check_calls_for_relisten(struct check *c, enum check_result found)
{
	if (found != CHECK_SILENT) {
		c->silent = 0;
		if (found == CHECK_GONE)
			log_warnx("%s (%s): nothing listens there (%s); listening again", c->what, c->url,
				  strerror(errno));
		else if (found == CHECK_STUCK)
			log_warnx("%s (%s) took no connection within %u ms; listening again", c->what,
				  c->url, c->lc->timeout_ms);
		return found != CHECK_TAKEN;
	}
	if (++c->silent == 1)
		log_warnx("%s (%s) did not answer a connection within %u ms; listening again after %d"
			  " such checks in a row",
			  c->what, c->url, c->lc->timeout_ms, LISTENCHECK_SILENT_CHECKS);
	if (c->silent < LISTENCHECK_SILENT_CHECKS)
		return false;
	log_warnx("%s (%s) answered no connection in %d checks in a row; listening again", c->what,
		  c->url, LISTENCHECK_SILENT_CHECKS);
	c->silent = 0;
	return true;
}

/* Closes the held connections the listener has answered since (or
 * closed): safe now.  Returns how many. */
static int check_release_answered(struct check *c)
{
	int answered = 0;

	for (int i = 0; i < c->nheld;) {
		struct pollfd p = { .fd = c->held[i], .events = POLLIN };

		if (poll(&p, 1, 0) == 1) {
			close(c->held[i]);
			c->held[i] = c->held[--c->nheld];
			answered++;
		} else {
			i++;
		}
	}
	return answered;
}

/* Closes every held connection: its listener was replaced (so the close
 * cannot stop the new one), or the checks are over. */
static void check_release_all(struct check *c)
{
	while (c->nheld)
		close(c->held[--c->nheld]);
}

static void check_hold(struct check *c, int fd)
{
	if (c->nheld == LISTENCHECK_SILENT_CHECKS) { /* answers came late and silence again: rare */
		close(c->held[0]);
		c->held[0] = c->held[--c->nheld];
	}
	c->held[c->nheld++] = fd;
}

static void check_run(struct check *c)
{
	enum check_result found;
	bool unanswered;
	int fd;

	/* A late answer shows a listener that is slow, not stopped. */
	if (check_release_answered(c))
		c->silent = 0;
	found = check_once(c, &fd, &unanswered);
	if (check_calls_for_relisten(c, found)) {
		if (c->relisten(c->arg) == 0)
			atomic_fetch_add(&c->lc->relistens, 1);
		else
			log_warnx("%s: listening again failed; next check in %u ms", c->what,
				  c->lc->interval_ms);
		check_release_all(c);
		unanswered = false;
	}
	/* Closed only when both headers have crossed, or the listener has
	 * answered otherwise, or the one we waited for is gone: then the
	 * close cannot stop a listener. */
	if (fd >= 0 && unanswered)
		check_hold(c, fd);
	else if (fd >= 0)
		close(fd);
}

static void *listencheck_main(void *arg)
{
	struct listencheck *lc = arg;

	pthread_setname_np(pthread_self(), "listencheck");
	while (listencheck_sleep(lc, lc->interval_ms))
		for (int i = 0; i < lc->n; i++)
			check_run(&lc->checks[i]);
	for (int i = 0; i < lc->n; i++) /* the sockets close after this: no fault to cause */
		check_release_all(&lc->checks[i]);
	return NULL;
}

int listencheck_start(struct listencheck *lc)
{
	if (lc->interval_ms == 0)
		return 0; /* checks are off */
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
		/* A check takes at most three times the timeout (connecting,
		 * the handshake, the socket's report); past that margin the thread
		 * is stuck inside nng (listening again closes a listener, and
		 * nng 1.5.2 can hang there), and a stop must not wait for it. */
		struct timespec until; /* pthread_timedjoin_np() counts on CLOCK_REALTIME */

		deadline_after_ms(&until, CLOCK_REALTIME,
				  3 * (int)lc->timeout_ms + LISTENCHECK_STOP_MARGIN_S * 1000);
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
