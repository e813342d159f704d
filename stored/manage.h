/*
 * manage.h - handing workers' NIP-86 requests to the admin thread.
 *
 * The rpc thread must never wait, and the admin thread answers one request
 * at a time from its socket, so a MANAGE request becomes an ordinary admin
 * request ({"cmd": "nip86", ...}) sent on an internal REQ socket dialed to
 * stored-admin.ipc, with nng's asynchronous I/O; the callback turns the
 * answer into MANAGE_RESULT for the worker.
 */
#ifndef STORED_MANAGE_H
#define STORED_MANAGE_H

struct stored;
struct rpc_return;
struct msg_manage;

/* Opens the internal socket (after the admin socket listens).  Returns 0
 * or ERR_NNG. */
int manage_open(struct stored *s);
/* Forwards one request; the answer goes to to when the admin thread has it. */
void manage_forward(struct stored *s, const struct rpc_return *to, const struct msg_manage *m);
/* Closes the internal socket (pending requests are answered as failed). */
void manage_close(struct stored *s);

#endif
