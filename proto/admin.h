/*
 * admin.h - the admin protocol between relayctl and stored's admin socket
 * (stored-admin.ipc, nng REQ/REP), defined once for both ends.
 *
 * A request is a JSON object {"cmd": name, "v": ADMIN_VERSION, ...fields}
 * or just the command word.  A request without "v" is version 1, so a bare
 * nngcat one-liner keeps working.  The answer is one JSON object; a failure
 * is {"error": "..."}.  stored refuses a request of a version it does not
 * speak with {"error": "...", "v": the version it speaks}; other answers
 * carry no "v", so they read as they did before versions existed.
 * stored/admin.h lists each command's fields and answer.
 *
 * The field names below are the ones both ends spell: what relayctl sends
 * and what it reads back.  Counters that relayctl only prints as it finds
 * them (stats) are named in stored alone.
 */
#ifndef PROTO_ADMIN_H
#define PROTO_ADMIN_H

#include <cjson/cJSON.h>

/* The admin protocol version this build speaks. */
#define ADMIN_VERSION 1

/* Every command; the names are in admin_cmd_name().  Not a wire number:
 * commands travel by name, so this order is free to change. */
enum admin_cmd {
	ADMIN_CMD_STATS,
	ADMIN_CMD_WORKERS,
	ADMIN_CMD_SUBS,
	ADMIN_CMD_CONFIG,
	ADMIN_CMD_CHECKPOINT,
	ADMIN_CMD_VACUUM,
	ADMIN_CMD_DELETE,
	ADMIN_CMD_BAN,
	ADMIN_CMD_UNBAN,
	ADMIN_CMD_BANS,
	ADMIN_CMD_NIP86,
	ADMIN_CMD_RETENTION,
	ADMIN_CMD_BACKUP,
	ADMIN_CMD_RELOAD,
	ADMIN_CMD_EXPORT,
	ADMIN_CMD_IMPORT,
	ADMIN_CMD_CONNS,
	ADMIN_CMD_KICK,
	ADMIN_CMD_LIMIT /* the number of commands; not a command */
};

/* A command's name ("stats"); NULL outside the enum. */
const char *admin_cmd_name(int cmd);

/* The command named name (NUL-terminated), or -1 if none is. */
int admin_cmd_find(const char *name);

/*
 * The version a parsed request asks for: its "v", or 1 when it has none
 * (or req is NULL: a bare word).  Returns -1 when "v" is not an integer
 * from 1 to 65535.  stored answers only requests of ADMIN_VERSION.
 */
int admin_request_version(const cJSON *req);

/*
 * Adds "cmd" (the name of cmd) and "v" (ADMIN_VERSION) to req, a JSON
 * object, where it has none.  Returns 0, or -1 when cJSON ran out of
 * memory (req may then hold one of the two).
 */
int admin_request_stamp(cJSON *req, enum admin_cmd cmd);

/* ---- fields of every request ---- */
#define ADMIN_F_CMD "cmd"
#define ADMIN_F_V "v"
/* ---- the answer to a failed request ---- */
#define ADMIN_F_ERROR "error"

/* ---- workers, stats: worker_list [{worker, pid, ...}] ---- */
#define ADMIN_F_WORKER_LIST "worker_list"
#define ADMIN_F_WORKER "worker"
#define ADMIN_F_PID "pid"
#define ADMIN_F_UPTIME_SECONDS "uptime_seconds"
#define ADMIN_F_CONNECTIONS "connections"
#define ADMIN_F_SUBSCRIPTIONS "subscriptions"
#define ADMIN_F_MESSAGES_IN "messages_in"
#define ADMIN_F_MESSAGES_OUT "messages_out"
#define ADMIN_F_EVENTS_REJECTED "events_rejected"
#define ADMIN_F_RATE_LIMITED "rate_limited"
#define ADMIN_F_CONNS_REFUSED "conns_refused"
#define ADMIN_F_READS_PAUSED "reads_paused"
#define ADMIN_F_LANE_REFUSED "lane_refused"
#define ADMIN_F_DELIVER_GAPS "deliver_gaps"
#define ADMIN_F_LISTENER_RESTARTS "listener_restarts"
#define ADMIN_F_STORE_TIMEOUTS "store_timeouts"
#define ADMIN_F_TOO_BIG_CLOSED "too_big_closed"
#define ADMIN_F_PINGS_SENT "pings_sent"
#define ADMIN_F_PING_TIMEOUTS "ping_timeouts"

/* ---- config: {config: {key: value}} ---- */
#define ADMIN_F_CONFIG "config"

/* ---- subs: request {max}; answer {total, listed, truncated,
 * subscriptions [{worker, conn_id, sub_id, filters}]} ---- */
#define ADMIN_F_MAX "max"
#define ADMIN_F_TOTAL "total"
#define ADMIN_F_LISTED "listed"
#define ADMIN_F_TRUNCATED "truncated"
#define ADMIN_F_CONN_ID "conn_id"
#define ADMIN_F_SUB_ID "sub_id"
#define ADMIN_F_FILTERS "filters"

/* ---- conns: request {max}; answer {total, listed, truncated,
 * conn_list [{worker, conn_id, address, since, messages_in, messages_out,
 * subscriptions, pubkeys}], unanswered [workers]} ---- */
#define ADMIN_F_CONN_LIST "conn_list"
#define ADMIN_F_ADDRESS "address"
#define ADMIN_F_SINCE "since"
#define ADMIN_F_PUBKEYS "pubkeys"
#define ADMIN_F_UNANSWERED "unanswered"

/* ---- kick: request {conn_id, reason}; answer {conn_id, kicked
 * [workers], unanswered [workers]} ---- */
#define ADMIN_F_KICKED "kicked"

/* ---- checkpoint, vacuum: {busy, wal_bytes_before, db_bytes_before,
 * db_bytes, wal_bytes} ---- */
#define ADMIN_F_BUSY "busy"
#define ADMIN_F_WAL_BYTES_BEFORE "wal_bytes_before"
#define ADMIN_F_DB_BYTES_BEFORE "db_bytes_before"
#define ADMIN_F_DB_BYTES "db_bytes"
#define ADMIN_F_WAL_BYTES "wal_bytes"

/* ---- delete: request {filter, dry_run}; answer {dry_run, matched} or
 * {deleted} ---- */
#define ADMIN_F_FILTER "filter"
#define ADMIN_F_DRY_RUN "dry_run"
#define ADMIN_F_MATCHED "matched"
#define ADMIN_F_DELETED "deleted"

/* ---- ban, unban, bans: request {pubkey, reason}; answers {pubkey,
 * was_banned, ...}, {pubkey, unbanned}, {bans [{pubkey, reason,
 * created_at}], total, truncated} ---- */
#define ADMIN_F_PUBKEY "pubkey"
#define ADMIN_F_REASON "reason"
#define ADMIN_F_WAS_BANNED "was_banned"
#define ADMIN_F_UNBANNED "unbanned"
#define ADMIN_F_BANS "bans"
#define ADMIN_F_CREATED_AT "created_at"

/* ---- export: request {filter, after, limit}; answer {last, more,
 * events} ---- */
#define ADMIN_F_AFTER "after"
#define ADMIN_F_LIMIT "limit"
#define ADMIN_F_LAST "last"
#define ADMIN_F_MORE "more"
#define ADMIN_F_EVENTS "events"

/* ---- import: request {events, verified}; answer {stored, duplicate,
 * superseded, refused, invalid, problems [{index, message}]} ---- */
#define ADMIN_F_VERIFIED "verified"
/* import: "sync" or "stream" names where the events came from for the
 * write-policy plugin (sourceType Sync, Stream); absent means Import. */
#define ADMIN_F_SOURCE "source"
#define ADMIN_F_STORED "stored"
#define ADMIN_F_DUPLICATE "duplicate"
#define ADMIN_F_SUPERSEDED "superseded"
#define ADMIN_F_REFUSED "refused"
#define ADMIN_F_INVALID "invalid"
#define ADMIN_F_PROBLEMS "problems"
#define ADMIN_F_INDEX "index"
#define ADMIN_F_MESSAGE "message"

/* ---- nip86: request {request: {method, params}}; answer {result} or
 * {error} ---- */
#define ADMIN_F_REQUEST "request"
#define ADMIN_F_METHOD "method"
#define ADMIN_F_PARAMS "params"
#define ADMIN_F_RESULT "result"

/* ---- retention: {retention, rules [{rule, days, would_delete}]} ---- */
#define ADMIN_F_RETENTION "retention"
#define ADMIN_F_RULES "rules"
#define ADMIN_F_RULE "rule"
#define ADMIN_F_DAYS "days"
#define ADMIN_F_WOULD_DELETE "would_delete"

/* ---- reload: {stored (bool), workers [numbers]} ---- */
#define ADMIN_F_WORKERS "workers"

/* ---- backup: request {path}; answer {state, path, pages_done,
 * pages_total, events, max_seq, bytes, seconds, failure} ---- */
#define ADMIN_F_PATH "path"
#define ADMIN_F_STATE "state"
#define ADMIN_F_PAGES_DONE "pages_done"
#define ADMIN_F_PAGES_TOTAL "pages_total"
#define ADMIN_F_MAX_SEQ "max_seq"
#define ADMIN_F_BYTES "bytes"
#define ADMIN_F_SECONDS "seconds"
#define ADMIN_F_FAILURE "failure"
/* The values of "state". */
#define ADMIN_BACKUP_NONE "none"
#define ADMIN_BACKUP_RUNNING "running"
#define ADMIN_BACKUP_DONE "done"
#define ADMIN_BACKUP_FAILED "failed"

#endif
