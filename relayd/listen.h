/*
 * listen.h - the worker's share of the relay's TCP port.
 *
 * Every worker opens its own listening socket on the same address and port
 * with SO_REUSEPORT, so the kernel spreads new connections over the workers
 * and a worker that dies takes only its own connections with it.  (The
 * libwebsockets of Debian 12 does not set SO_REUSEPORT itself, so the socket
 * is made here and handed to lws: lws watches it as a raw descriptor and
 * listen_on_ready() accepts and adopts each connection into the vhost.)
 */
#ifndef RELAYD_LISTEN_H
#define RELAYD_LISTEN_H

#include <libwebsockets.h>

/* The lws protocol that watches the listening socket (ws.c's table). */
#define LISTEN_PROTOCOL "nostr-listen"

/* Opens a non-blocking socket bound to address:port with SO_REUSEPORT (so a
 * port in use is found at start), not listening yet.  Returns the fd, or -1
 * (errno set). */
int listen_open(const char *address, unsigned port);

/* Starts listening on fd and has lws watch it on vh under the protocol
 * named protocol.  Until then the kernel gives this worker no connections.
 * Returns 0 or -1. */
int listen_adopt(struct lws_vhost *vh, int fd, const char *protocol);

/* The listening fd is readable: accepts what is waiting and adopts each new
 * connection into vh as HTTP/websocket.  Returns 0. */
int listen_on_ready(struct lws_vhost *vh, int fd);

#endif
