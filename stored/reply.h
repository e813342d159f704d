/*
 * reply.h - stored's reply channel to each worker.
 *
 * Replies leave on a PUSH socket per worker.  By default it dials the
 * worker's own listener (relayd-<worker>-<boot id>.ipc, proto/msg.h says
 * why not the REP socket).  With link_reply_url set (workers on other
 * hosts) it listens instead, on that URL's port plus the worker's id, and
 * the worker dials it: stored never opens a connection to a worker host,
 * and the newest pipe of a worker replaces its older ones (a pulled cable
 * leaves them half open).  PUSH keeps every message and makes the sender wait when the
 * worker is slow, so nothing is dropped under a burst.  A worker that stops
 * reading altogether must not stall stored: after one send times out the
 * channel counts as stalled and further replies to it are dropped at once
 * until one goes through (its clients then get error: from the worker's own
 * deadlines: an EVENT's OK after store_timeout_ms, a COUNT's or a
 * history's CLOSED after answer_timeout_ms; relayd/service.h).
 *
 * Threading: reply_send() may be called from any thread; reply_open() from
 * the rpc thread; reply_close_all() once every other thread has stopped.
 */
#ifndef STORED_REPLY_H
#define STORED_REPLY_H

#include <stddef.h>
#include <stdint.h>

struct stored;
struct rpc_return;

/*
 * Gives worker a channel to the incarnation boot_id, replacing the one to
 * an earlier incarnation (whose queued replies are discarded with it).  The
 * dial (or the worker's dial, with link_reply_url) completes in the
 * background; the first send waits for it.  Returns 0 or ERR_NNG.
 */
int reply_open(struct stored *s, uint16_t worker, uint64_t boot_id);

/*
 * Sends payload (a complete encoded message) to the worker named by to.
 * Dropped (ERR_CLOSED) when that worker's request pipe is gone or replaced:
 * the reply belongs to an incarnation that no longer waits for it.  Waits
 * at most 2 s while the worker's queue is full.  Returns 0, ERR_CLOSED,
 * ERR_FULL (stalled), ERR_NNG or ERR_NOMEM.
 */
int reply_send(struct stored *s, const struct rpc_return *to, const void *payload, size_t len);

/*
 * Sends worker's DELIVER payload on its reply channel without waiting
 * (pub.h says when): dropped, never queued beyond nng's buffer, when the
 * channel is full, so a slow worker costs the broadcaster nothing.  Any
 * thread.  Returns 0, ERR_CLOSED (no channel), ERR_FULL or ERR_NOMEM.
 */
int reply_deliver(struct stored *s, uint16_t worker, const void *payload, size_t len);

/* Ends a history, resume or replay for subscription serial of conn_id
 * with QUERY_DONE refused: its client gets CLOSED with why (a replay's
 * worker only stops waiting).  Returns as reply_send(). */
int reply_query_closed(struct stored *s, const struct rpc_return *to, uint64_t conn_id,
		       uint32_t serial, int64_t max_seq, const char *why);

/* Answers the COUNT sub_id of conn_id with COUNT_RESULT refused: its
 * client gets CLOSED with why.  Returns as reply_send(). */
int reply_count_closed(struct stored *s, const struct rpc_return *to, uint64_t conn_id,
		       const char *sub_id, uint32_t sub_id_len, const char *why);

/* Closes every channel (stored's shutdown). */
void reply_close_all(struct stored *s);

#endif
