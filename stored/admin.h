/*
 * admin.h - stored's admin socket (stored-admin.ipc, nng REQ/REP, mode 0600).
 *
 * A request is a JSON object {"cmd": "stats", "v": 1, ...arguments} or just
 * the bare command word (so `nngcat --req --dial ipc://.../stored-admin.ipc
 * --data stats --ascii` works); the reply is always one JSON object, without
 * a trailing newline.  A failure is {"error": "..."}.  A request without
 * "v" is version 1; one of another version is refused (proto/admin.h holds
 * the commands, the field names and the version).  Requests may be up to
 * 2 * max_message_bytes + 4 MiB; replies stay under 1 MiB except `subs`
 * (up to about 16 MiB), `conns` (about 250 bytes a connection) and an
 * export page holding one larger event.
 *
 *   stats       events, db_bytes, wal_bytes, ingest_rate and query_rate
 *               (per second, over the last ~10 s), counters, queue depths,
 *               rejects {duplicate, blocked, error, other} (OK messages of
 *               the writer by prefix), worker_list [per worker: pid,
 *               started_at, uptime_seconds, connections, subscriptions,
 *               messages_in/out, events_rejected, rate_limited,
 *               conns_refused, lane_refused, reads_paused, requests_on_loop,
 *               deliver_gaps, listener_restarts, unmasked_closed,
 *               store_timeouts, too_big_closed, pings_sent, ping_timeouts]
 *   workers     {worker_list}
 *   subs        {"max": n}: live subscriptions sorted by worker, conn_id,
 *               sub_id, each with its filters: {total, listed, truncated,
 *               subscriptions: [{worker, conn_id, sub_id, serial, filters}]}
 *               (at most max, and never more than 10000)
 *   conns       {"max": n}: every worker's open connections, sorted by worker
 *               and conn_id: {total, listed, truncated, conn_list:
 *               [{worker, conn_id, address, since, messages_in,
 *               messages_out, subscriptions, pubkeys}], unanswered:
 *               [workers that did not answer within conns_timeout_ms]}
 *               (at most max and conns_list_max; admin_conns.c).  A
 *               conn_id is a decimal string: ids pass 2^53.
 *   kick        {"conn_id": "id", "reason": text}: the worker holding it
 *               closes it with a websocket Close 1008 and the reason:
 *               {conn_id, kicked: [workers], unanswered: [workers]};
 *               an error when no worker that answered has it
 *   config      {config: {key: value}}, the configuration stored runs with
 *   checkpoint  PRAGMA wal_checkpoint(TRUNCATE) by the writer:
 *               {busy, wal_bytes_before, db_bytes, wal_bytes}
 *   vacuum      VACUUM by the writer (events wait meanwhile), then a
 *               checkpoint: {db_bytes_before, db_bytes, wal_bytes, busy}
 *   delete      {"filter": F, "dry_run": bool} where F is a filter object or
 *               an array of them (OR'ed; limit ignored): {dry_run, matched}
 *               counted on a read connection, or {deleted} by the writer.
 *               No tombstone: deleted events may be published again.
 *   ban         {"pubkey": hex, "reason": text}: the writer refuses every
 *               later event of pubkey ("blocked: this pubkey is banned");
 *               stored ones are kept: {pubkey, banned, was_banned, note}
 *   unban       {"pubkey": hex}: {pubkey, unbanned (false: was not banned)}
 *   bans        {bans: [{pubkey, reason, created_at}], total, truncated}
 *   export      {"filter": F (optional: all), "after": seq, "limit": n}: one
 *               page of events in seq order after seq (default 1000, at most
 *               10000 and about 1 MiB): {last, more, events: [event...]};
 *               ask again with after = last while more is true
 *   import      {"events": [event...], "verified": bool} (1..10000): each
 *               is checked like a client's (id, signature; ephemeral and
 *               expired refused) and ingested by the writer under the usual
 *               rules: {stored, duplicate, superseded (a newer version is
 *               stored), refused, invalid, problems: [{index, message}]}.
 *               With "verified": true the signatures are not checked here:
 *               relayctl checked them, on every core.  Only stored's user
 *               and root reach this socket, and they can write relay.db
 *               directly, so the flag gives no one a new power.
 *   retention   what the retention rules would remove now, counted, nothing
 *               deleted: {retention (the rules' text), rules: [{rule, days,
 *               would_delete}]}
 *   reload      SIGHUP to stored and every connected worker, as `systemctl
 *               reload`: {stored: bool, workers: [numbers signalled]}
 *   backup      {"path": "/abs/file.db"} starts a copy of relay.db
 *               (backup.h) and answers at once; without a path, how it
 *               stands: {state (none, running, done, failed), path,
 *               pages_done, pages_total, events, max_seq, bytes,
 *               wal_checkpointed, seconds,
 *               failure (failed only)} (admin_backup.c)
 *   nip86       {"request": {"method": m, "params": [...]}}: a NIP-86
 *               management call, as a worker forwards an authorized HTTP
 *               one: {"result": ...} or {"error": "..."} (admin_nip86.c)
 *
 * The writer's jobs and listings are waited for up to 60 s; past that the
 * reply is an error saying the job may still complete.
 */
#ifndef STORED_ADMIN_H
#define STORED_ADMIN_H

#include <pthread.h>

struct stored;

/* Listens on the admin socket and starts its thread.  Returns 0 or ERR_NNG /
 * ERR_DB / ERR_NOMEM. */
int admin_start(struct stored *s, pthread_t *thread);

/* Closes the admin socket's listener and listens on its path again
 * (common/listencheck.h: arg is the struct stored).  Returns 0 or ERR_NNG. */
int admin_relisten(void *arg);

#endif
