/*
 * rpc.h - stored's end of stored-rpc.ipc and stored-pub.ipc.
 *
 * rpc_open() listens on both sockets.  rpc_run() is the receive loop: it
 * decodes each worker request and routes it by type through a table to the
 * writer, the broadcaster or an immediate reply.  A request that does not
 * decode is counted and dropped (the worker times it out); it never stops
 * the loop.
 */
#ifndef STORED_RPC_H
#define STORED_RPC_H

struct stored;

/* Opens and listens on the rpc (raw REP) and pub (PUB) sockets.  Returns 0
 * or ERR_NNG (logged). */
int rpc_open(struct stored *s);

/* Close the rpc (or pub) socket's listener and listen on its path again
 * (common/listencheck.h: arg is the struct stored).  Return 0 or ERR_NNG. */
int rpc_relisten_requests(void *arg);
int rpc_relisten_deliveries(void *arg);

/* Receives and routes requests until the rpc socket is closed. */
void rpc_run(struct stored *s);

#endif
