/*
 * portlock.h - one relay per port.
 *
 * Workers bind the client port with SO_REUSEPORT, so the kernel would let
 * a second relay (another stored and its workers, say started by mistake
 * with the same config) share the port silently: each client would land on
 * one of two databases by chance.  stored therefore holds a lock named
 * after the port for as long as it runs: an abstract Unix socket bound to
 * "crelay-port-<port>" (the kernel releases it when the process dies, even
 * by SIGKILL, so a restart never finds a stale lock).  A second stored for
 * the same port refuses to start, and its workers never listen, since a
 * worker only accepts once its stored answers.
 */
#ifndef STORED_PORTLOCK_H
#define STORED_PORTLOCK_H

#include <stdint.h>

/* Takes the lock for port; returns its descriptor (keep it open), or -1
 * with errno EADDRINUSE when another relay holds it (or another error). */
int portlock_take(uint16_t port);

#endif
