/*
 * ws_conn_int.h - the insides of a ws_conn and a ws_loop, shared by
 * ws_client.c (sockets, epoll, the loop), ws_conn.c (output and the end of
 * a connection) and ws_recv.c (turning received bytes into handshakes,
 * messages and control replies).  Nothing outside those three files
 * includes this.
 */
#ifndef COMMON_WS_CONN_INT_H
#define COMMON_WS_CONN_INT_H

#include <stdbool.h>

#include "buf.h"
#include "ws_client.h"
#include "ws_deflate.h"
#include "ws_handshake.h"

enum ws_state {
	WS_CONNECTING, /* TCP connect in progress; request queued */
	WS_HANDSHAKE,  /* request sent (or sending); waiting for 101 */
	WS_OPEN,
	WS_CLOSING,    /* our close frame is queued or sent */
	WS_DEAD,       /* on_close has run; freed at the end of the poll */
};

struct ws_conn {
	struct ws_loop *loop;
	struct ws_conn *prev, *next; /* the loop's list of all conns */
	struct ws_conn *next_dirty;  /* the loop's list of conns with output */
	int fd;
	enum ws_state state;
	bool dirty;
	bool want_out; /* EPOLLOUT is registered */
	int worker;
	int sys_errno;
	const struct ws_handlers *h;
	void *ud;
	char key[WS_KEY_LEN + 1];
	struct buf in;  /* received, not yet consumed */
	struct buf out; /* to send; out_off bytes of it already sent */
	size_t out_off;
	struct buf msg; /* a fragmented message being joined */
	int msg_op;     /* its opcode, or -1 */
	bool msg_z;     /* it is compressed (RSV1 on its first frame) */
	bool deflate;   /* the handshake accepted permessage-deflate */
};

struct ws_loop {
	int epfd;
	struct ws_conn *all;
	struct ws_conn *dirty;
	struct ws_conn *dead;
	size_t live;
	size_t max_message;
	uint64_t mask_state; /* splitmix64 state for mask keys */
	struct ws_zstreams *z; /* set: offer permessage-deflate (ws_deflate.h) */
	struct buf zbuf;       /* a message compressed or inflated */
	uint64_t bytes_in, bytes_out; /* on the wire, handshakes included */
};

/* ws_conn.c: */
/* Ends c: closes the socket, runs on_close(err) once, queues it for freeing. */
void ws__teardown(struct ws_conn *c, int err);

/* Queues a frame on c and marks it for flushing.  Returns 0 or ERR_NOMEM. */
int ws__queue(struct ws_conn *c, int opcode, const struct iovec *iov, int iovcnt);

/* Ends c for a socket error e (ERR_IO, ws_conn_errno() gives e). */
void ws__fail_io(struct ws_conn *c, int e);
/* Puts c on its loop's list of connections with output to flush. */
void ws__mark_dirty(struct ws_conn *c);

/* ws_recv.c: */
/* Consumes c->in: the handshake response, then frames.  May tear c down. */
void ws__recv(struct ws_conn *c);

#endif
