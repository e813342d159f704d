/*
 * listencheck.h - noticing an nng listener that stopped taking connections,
 * and listening again.
 *
 * nng 1.5.2, the version Debian 12 ships, has a fault (nng issue #1518,
 * fixed upstream after that release): when a peer closes its connection to
 * an IPC listener before the two SP headers have been exchanged, the
 * listener passes the "closed" error up to its socket, which takes it for
 * the listener's own closing and stops taking its connections.  The
 * transport still accepts and answers the handshake, so a dialer's pipe
 * comes up, but the socket never reads it: a worker that connects then
 * sends its HELLO into nothing, and the operator's relayctl waits forever.
 * Any connect-and-close on the socket file does it (a health check with
 * `nc -U` or socat, a peer killed in that millisecond, a dialer closed
 * mid-handshake), and only a restart of the listening process undid it.
 *
 * So each listening socket is checked: every interval a thread of this
 * process connects to its path and does the SP handshake by hand (an
 * 8-byte header each way, claiming the listening socket's peer protocol),
 * then waits until the listening socket itself reports the new pipe (an
 * ADD_POST whose peer is this process).  A listener that answers the
 * handshake but whose socket does not take the pipe within the timeout
 * (the fault's own sign), or whose path nothing listens on any more (its
 * file removed), is listened again by its owner's callback: closing the
 * old listener closes every pipe it made, the stuck ones included, and
 * their peers redial the new one, as after a restart of this process but
 * with its state kept.  One that does not answer the handshake at all is
 * more likely busy than stopped (the fault leaves the handshake working),
 * so it is listened again only after LISTENCHECK_SILENT_CHECKS such checks
 * in a row, and a late answer starts the count over.
 *
 * The check uses a plain socket, not an nng one, because nng 1.5.2 can
 * also hang for good in nng_close() (nng issue #1543): a first version
 * that opened and closed an nng socket per check hung a stored at exit.
 * Its connection is closed only once both headers have crossed (the
 * listener has ours, so the close cannot hit the fault), once the listener
 * has answered it in any way, or after the listener it waited for has been
 * replaced; a silent check's connection is kept open until then.
 */
#ifndef COMMON_LISTENCHECK_H
#define COMMON_LISTENCHECK_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#define LISTENCHECK_MAX 4
/* Checks in a row that get no handshake before the listener is replaced. */
#define LISTENCHECK_SILENT_CHECKS 5

/* SP protocol numbers a check speaks as: the peer of the socket checked. */
#define LISTENCHECK_AS_REQ 0x30  /* to a REP socket */
#define LISTENCHECK_AS_SUB 0x21  /* to a PUB socket */
#define LISTENCHECK_AS_PUSH 0x50 /* to a PULL socket */

struct listencheck;

/* Closes the owner's listener and listens on the same path again; runs on
 * the checker's thread.  Returns 0, or nonzero (logged; retried at the
 * next failed check). */
typedef int (*listencheck_relisten_fn)(void *arg);

/* An empty checker: add the sockets, then start it.  It checks every
 * interval_ms (0: never; listen_check_ms in the config) and waits
 * timeout_ms for the connection and each of a check's two answers
 * (listen_check_timeout_ms). */
struct listencheck *listencheck_new(uint32_t interval_ms, uint32_t timeout_ms);

/*
 * Checks sock, listening at url (ipc://), speaking as protocol peer_proto
 * (LISTENCHECK_AS_*); relisten(arg) replaces its listener.  Takes sock's
 * ADD_POST pipe notification (nng keeps one per socket and event).  what
 * names it in the log.  Before listencheck_start() only; returns 0, or
 * ERR_INVAL past LISTENCHECK_MAX or for a url that is not ipc://.
 */
int listencheck_add(struct listencheck *lc, nng_socket sock, const char *url, uint16_t peer_proto,
		    listencheck_relisten_fn relisten, void *arg, const char *what);

/* Starts the thread (none if the interval is 0).  Returns 0 or ERR_NOMEM. */
int listencheck_start(struct listencheck *lc);

/* Listeners replaced so far (all sockets together); 0 for NULL. */
uint64_t listencheck_relistens(const struct listencheck *lc);

/* Stops the thread (after the check in progress, if any: at most three
 * times the timeout; one stuck inside nng longer than that is left behind, logged);
 * NULL is a no-op.  Call before closing the checked sockets. */
void listencheck_stop(struct listencheck *lc);

/* Stops it if running and frees lc (not if its thread was left behind);
 * NULL is a no-op.  Call after the checked sockets are closed: their pipe
 * callbacks point into lc until then. */
void listencheck_free(struct listencheck *lc);

/* True if pipe's peer is this process: a check's connection, which pipe
 * callbacks that track real peers should ignore. */
bool listencheck_is_own_pipe(nng_pipe pipe);

#endif
