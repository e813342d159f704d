/*
 * admin_cmds.h - the admin socket's commands, shared by admin.c (the socket
 * and the dispatch table), admin_util.c (what the handlers share) and the
 * files holding the handlers: admin_info.c (stats, workers, subs, config,
 * bans: reading), admin_write.c (checkpoint, vacuum, ban, unban, delete:
 * jobs for the writer), admin_data.c (export and import of events) and
 * admin_conns.c (conns, kick: questions to the workers).
 * The command names and field names are proto/admin.h's.
 *
 * A handler gets the request object (NULL for a bare word) and returns the
 * reply object, which the caller prints and frees; a handler never returns
 * NULL (admin__error() on failure).  Everything runs on the admin thread.
 */
#ifndef STORED_ADMIN_CMDS_H
#define STORED_ADMIN_CMDS_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

#include "../common/filter.h"
#include "../proto/admin.h"
#include "jobs.h"
#include "rate.h"

struct stored;
struct sig_verifier;

/* How long the admin thread waits for the writer or the broadcaster. */
#define ADMIN_WAIT_MS 60000

/* The admin thread's state (admin.c owns it). */
struct admin {
	struct stored *s;
	sqlite3 *db;        /* read-only connection: counts, bans, export pages */
	time_t started;
	double sampled_at;  /* monotonic seconds of the last rate sample */
	struct rate ingest; /* events_accepted over time */
	struct rate queries;
	struct sig_verifier *verifier; /* import's signature checks */
};

typedef cJSON *(*admin_fn)(struct admin *a, const cJSON *req);

/* admin.c: the handler of cmd (enum admin_cmd), NULL outside the enum. */
admin_fn admin__handler(int cmd);

/*
 * admin.c: the answer to one request of len bytes at data (a JSON object
 * or a bare command word).  A request of another version than
 * ADMIN_VERSION, an unknown command or a \u0000 escape gets an error
 * answer.  Never NULL; the caller prints and frees it.
 */
cJSON *admin__reply(struct admin *a, const char *data, size_t len);

/* admin_util.c: {"error": message}, message formatted as printf does. */
cJSON *admin__error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Adds a counter as a JSON number (exact up to 2^53). */
void admin__add_u64(cJSON *obj, const char *name, uint64_t v);
/* Size of the file at path, 0 if it does not exist. */
uint64_t admin__file_size(const char *path);

/*
 * The request's "filter": one filter object or an array of 1..100 of them.
 * Absent: *n = 0 and *out NULL (the caller decides what that means).
 * Returns 0 with *out owned by the caller (filters_free), or ERR_INVAL with
 * a reason in why.
 */
int admin__filters(const cJSON *req, struct filter **out, uint32_t *n, char *why, size_t why_len);

/*
 * Hands job to the writer (to_writer) or the broadcaster, and waits up to
 * ADMIN_WAIT_MS for it.  Returns 0 (the outputs are valid), ERR_FULL or
 * ERR_CLOSED (not queued), or ERR_TIMEOUT (it may still run).  The caller
 * keeps its reference either way.
 */
int admin__run(struct admin *a, struct admin_job *job, int to_writer);

/* The reply for a failed admin__run() or job->rc. */
cJSON *admin__job_error(const char *what, int rc);

/* admin_info.c */
cJSON *admin__stats(struct admin *a, const cJSON *req);
cJSON *admin__workers(struct admin *a, const cJSON *req);
cJSON *admin__subs(struct admin *a, const cJSON *req);
cJSON *admin__config(struct admin *a, const cJSON *req);
cJSON *admin__bans(struct admin *a, const cJSON *req);
/* Takes a sample of the counters behind the rates (at most once a second). */
void admin__sample(struct admin *a);

/* admin_write.c */
cJSON *admin__checkpoint(struct admin *a, const cJSON *req);
cJSON *admin__vacuum(struct admin *a, const cJSON *req);
cJSON *admin__ban(struct admin *a, const cJSON *req);
cJSON *admin__unban(struct admin *a, const cJSON *req);
cJSON *admin__delete(struct admin *a, const cJSON *req);

/* admin_reload.c: SIGHUP to stored and every connected worker */
cJSON *admin__reload(struct admin *a, const cJSON *req);

/* admin_backup.c: a copy of relay.db while the relay runs (backup.h) */
cJSON *admin__backup(struct admin *a, const cJSON *req);

/* admin_retention.c: what the retention rules would remove now */
cJSON *admin__retention(struct admin *a, const cJSON *req);

/* admin_nip86.c: {"cmd": "nip86", "request": {...}} answers a NIP-86 request */
cJSON *admin__nip86(struct admin *a, const cJSON *req);

/* admin_conns.c: the workers' open connections, and closing one of them */
cJSON *admin__conns(struct admin *a, const cJSON *req);
cJSON *admin__kick(struct admin *a, const cJSON *req);

/* admin_data.c */
cJSON *admin__export(struct admin *a, const cJSON *req);
cJSON *admin__import(struct admin *a, const cJSON *req);

#endif
