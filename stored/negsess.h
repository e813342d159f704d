/*
 * negsess.h - NIP-77 negentropy sessions, owned by one thread of stored.
 *
 * A session is named (worker, conn_id, sub_id).  NEG_OPEN files it and asks
 * the query pool for the (created_at, id) of every event its filter shows
 * that connection, as a REQ would (deletions, expiry, private kinds), at
 * most neg_max_records.  A query thread reads them on its own connection,
 * sorts them and hands the array back; the session owns it from then on,
 * frozen: later events are not in it.  Each NEG_MSG is then answered from
 * that array on the session thread, which holds no query thread and no
 * SQLite connection while the client thinks.
 *
 * Why here and not in relayd: the per-relay bound needs one owner, and the
 * array (40 bytes per record, 40 MB for a million) stays in one process
 * rather than in whichever worker holds the connection.  The cost is one
 * IPC round trip per message, small beside the client's network one.
 *
 * Bounds: neg_sessions_per_conn and neg_sessions_max sessions (NEG-ERR
 * blocked: past them), neg_max_records records each (blocked:), and
 * neg_idle_seconds without a message (closed:).  Memory is at most
 * neg_sessions_max * neg_max_records * 40 bytes, plus one reply each.
 *
 * Threading: negsess_open/msg/close/conn_closed/worker_gone are called by
 * the rpc thread; each only queues a job for the session thread.  Query
 * threads hand back items as NEG_JOB_ITEMS on s->neg_q (jobs.h).
 */
#ifndef STORED_NEGSESS_H
#define STORED_NEGSESS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/neg.h"
#include "../proto/msg.h"

struct stored;
struct rpc_return;

/* Starts the session thread (s->neg).  Returns 0 or ERR_NOMEM. */
int negsess_start(struct stored *s);
/* Stops it and frees every session; call once the rpc and query threads
 * have stopped. */
void negsess_stop(struct stored *s);

/* A decoded NEG_OPEN: its filter moves into the session (m->filter is
 * left empty); the rest is copied. */
void negsess_open(struct stored *s, const struct rpc_return *to, struct msg_neg_open *m);
void negsess_msg(struct stored *s, const struct rpc_return *to, const struct msg_neg_msg *m);
void negsess_close(struct stored *s, const struct rpc_return *to, const struct msg_neg_close *m);
/* The connection is gone: its sessions end without a reply. */
void negsess_conn_closed(struct stored *s, uint16_t worker, uint64_t conn_id);
/* The worker restarted or its pipe closed: all its sessions end. */
void negsess_worker_gone(struct stored *s, uint16_t worker);

#endif
