/*
 * listencheck.h - noticing an nng listener that stopped taking connections,
 * and listening again.
 *
 * A struct listencheck owns one thread and the ADD_POST pipe notification
 * of each socket it checks (LISTENCHECK_MAX at most); the sockets stay
 * their owner's.  Every interval the thread connects to each socket's
 * ipc:// path with a plain socket, does the SP handshake by hand (an 8-byte
 * header each way) and waits for the socket to report the new pipe.  A
 * listener whose socket does not take the pipe within the timeout, or
 * whose path nothing listens on, is listened again by its owner's
 * callback.  Closing the old listener closes its pipes, stuck ones too, and
 * their peers redial, as after a restart but with the process's state
 * kept.  A listener that does not answer the handshake at all is more
 * likely busy than stopped.  It is listened again only after
 * LISTENCHECK_SILENT_CHECKS such checks in a row, and a late answer starts
 * the count over.
 *
 * Why: nng 1.5.2, Debian 12's, has a fault (nng issue #1518).  A peer that
 * closes its connection to an IPC listener before the SP headers are
 * exchanged makes the socket stop taking that listener's connections.  The
 * handshake still works, so dialers' pipes come up but are never read.
 * Any connect-and-close on the socket file triggers it, such as a health
 * check with `nc -U` (bench/RESULTS.md, "Findings beyond the targets",
 * item 11).
 *
 * The check uses a plain socket because nng 1.5.2 can also hang for good
 * in nng_close() (nng issue #1543).  Its connection is closed only once
 * both headers have crossed, once the listener has answered in any way, or
 * after the listener it waited for was replaced.  So the check's own close
 * cannot trigger the fault.
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
 * the checker's thread.  Returns 0, or nonzero, which is logged and retried
 * at the next failed check. */
typedef int (*listencheck_relisten_fn)(void *arg);

/* An empty checker, or NULL when out of memory: add the sockets, then
 * start it.  It checks every interval_ms (listen_check_ms; 0: never) and
 * waits timeout_ms (listen_check_timeout_ms) for the connection and each of
 * a check's two answers.  listencheck_free() frees it. */
struct listencheck *listencheck_new(uint32_t interval_ms, uint32_t timeout_ms);

/*
 * Checks sock, listening at url (ipc://), speaking as protocol peer_proto
 * (LISTENCHECK_AS_*); relisten(arg) replaces its listener, and what names
 * it in the log (url and what are copied).  Returns 0, or ERR_INVAL past
 * LISTENCHECK_MAX, after listencheck_start(), or for a url that is not an
 * ipc:// path short enough for a socket address.  It takes sock's ADD_POST
 * pipe notification, since nng keeps one per socket and event.
 */
int listencheck_add(struct listencheck *lc, nng_socket sock, const char *url, uint16_t peer_proto,
		    listencheck_relisten_fn relisten, void *arg, const char *what);

/* Starts the thread (none if the interval is 0).  Returns 0 or ERR_NOMEM. */
int listencheck_start(struct listencheck *lc);

/* Listeners replaced so far (all sockets together); 0 for NULL. */
uint64_t listencheck_relistens(const struct listencheck *lc);

/* Stops the thread after the check in progress, if any; NULL is a no-op.
 * Call before closing the checked sockets.  It waits at most three times
 * the timeout; a thread stuck inside nng longer is left behind and logged. */
void listencheck_stop(struct listencheck *lc);

/* Stops it if running and frees lc (not if its thread was left behind);
 * NULL is a no-op.  Call after the checked sockets are closed: their pipe
 * callbacks point into lc until then. */
void listencheck_free(struct listencheck *lc);

/* True if pipe's peer is this process: a check's connection, which pipe
 * callbacks that track real peers should ignore. */
bool listencheck_is_own_pipe(nng_pipe pipe);

#endif
