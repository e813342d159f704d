/*
 * ctl.h - relayctl's parts: the arguments and the command table
 * (relayctl.c), the connection to stored's admin socket (ctl_call.c), the
 * human-readable printers (ctl_show.c), the event transfers that take
 * several requests (ctl_data.c: export; ctl_import.c: import, whose lines
 * ctl_judge.c checks), the backup, which waits for stored to finish it
 * (ctl_backup.c), and the websocket commands sync (ctl_sync.c) and stream
 * (ctl_stream.c) over a connection to another relay (ctl_peer.c).
 */
#ifndef RELAYCTL_CTL_H
#define RELAYCTL_CTL_H

#include <cjson/cJSON.h>
#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/config.h"
#include "../../common/event.h"
#include "../../proto/admin.h"

struct sig_verifier;

struct ctl {
	struct config cfg;
	const char *config_path;
	const char *command;
	enum admin_cmd cmd; /* the command named by command */
	char **args; /* the command's own arguments */
	int nargs;
	int json;    /* --json: print stored's JSON as it came */
	int dry_run; /* --dry-run (delete; sync: reconcile only) */
	const char *dir; /* --dir down|up|both (sync) */
	nng_socket sock;
	char url[256];
};

/* Opens c->sock and dials stored-admin.ipc in c->cfg's run_dir.  Returns 0,
 * or 1 after telling stderr why. */
int ctl_open(struct ctl *c);

/*
 * Sends req (a JSON object; it gets "cmd" and "v" added where missing,
 * admin_request_stamp()) and waits for
 * the reply.  Returns 0 with *reply parsed (the caller frees it) and, when
 * text is not NULL, *text the reply as sent (free()), or 1 after telling
 * stderr why (unreachable, timed out, not JSON).  A reply {"error": ...} is
 * returned as any other: see ctl_failed().
 */
int ctl_call(struct ctl *c, cJSON *req, cJSON **reply, char **text);

/* ctl_call() of a request already printed: len bytes at request, a JSON
 * object that names its "cmd" and "v" itself.  The same returns. */
int ctl_call_text(struct ctl *c, const char *request, size_t len, cJSON **reply, char **text);

/* If reply is {"error": ...}: prints it to stderr and returns 1; else 0. */
int ctl_failed(const cJSON *reply);

/* A number field of obj, or 0. */
double ctl_num(const cJSON *obj, const char *name);

/* Printers of replies, without --json (ctl_show.c). */
void ctl_show_workers(const cJSON *reply);
void ctl_show_stats(const cJSON *reply);
void ctl_show_subs(const cJSON *reply);
void ctl_show_conns(const cJSON *reply);
void ctl_show_kick(const cJSON *reply);
void ctl_show_config(const cJSON *reply);
void ctl_show_checkpoint(const cJSON *reply);
void ctl_show_vacuum(const cJSON *reply);
void ctl_show_delete(const cJSON *reply);
void ctl_show_ban(const cJSON *reply);
void ctl_show_unban(const cJSON *reply);
void ctl_show_bans(const cJSON *reply);

/* export and import (ctl_data.c); each returns relayctl's exit status. */
int ctl_export(struct ctl *c);
int ctl_import(struct ctl *c);

/* What stored made of events sent to it (superseded counts as duplicate,
 * invalid as refused). */
struct ctl_tally {
	size_t stored, duplicate, refused;
};

/* Sends events (a JSON array, borrowed) to stored's import with source
 * ("sync", "stream"), adding its answer to *t.  stored checks each
 * signature itself.  Returns 0, or 1 after telling stderr why. */
int ctl_store_events(struct ctl *c, cJSON *events, const char *source, struct ctl_tally *t);

/* ---- sync (ctl_sync.c) over a websocket to another relay (ctl_peer.c) ---- */

/* relayctl sync URL [FILTER] [--dir down|up|both] [--dry-run]: NIP-77
 * against URL, then fetch what is missing here and/or publish what is
 * missing there (with --dry-run neither: only the counts).
 * Returns 0 when both sides hold the same set for the filter, 1 when some
 * event could not be moved or the peer failed, 2 for bad usage. */
int ctl_sync(struct ctl *c);

/* relayctl stream URL [FILTER]: stores every event URL sends for FILTER,
 * reconnecting with backoff, until SIGTERM or SIGINT.  Returns 0 after a
 * stop, 1 when stored failed, 2 for bad usage. */
int ctl_stream(struct ctl *c);

struct ctl_peer;

/* Connects to url (ws:// on loopback), waiting up to timeout_ms for the
 * handshake.  Returns the peer, or NULL after telling stderr why. */
struct ctl_peer *ctl_peer_open(const char *url, int timeout_ms);
/* Closes and frees the peer.  NULL-safe. */
void ctl_peer_close(struct ctl_peer *p);
/* Sends one text message (len bytes) or one JSON value; 0 or -1 (gone). */
int ctl_peer_send(struct ctl_peer *p, const char *text, size_t len);
int ctl_peer_send_json(struct ctl_peer *p, const cJSON *msg);
/* The next JSON array the peer sent (the caller frees it), waiting up to
 * timeout_ms; NULL on timeout or once the connection is gone. */
cJSON *ctl_peer_next(struct ctl_peer *p, int timeout_ms);
bool ctl_peer_gone(const struct ctl_peer *p);
/* Message bytes received and sent so far (payloads, not framing). */
uint64_t ctl_peer_bytes_in(const struct ctl_peer *p);
uint64_t ctl_peer_bytes_out(const struct ctl_peer *p);
/* ---- import's lines (ctl_judge.c) ---- */

/* What one line of an import came to. */
enum ctl_verdict {
	CTL_BLANK,   /* nothing but white space */
	CTL_INVALID, /* refused by relayctl; why says why */
	CTL_GOOD,    /* ev holds the event, its signature checked */
	CTL_REFUSED, /* CTL_GOOD, then refused by stored; why says why */
};

struct ctl_line {
	unsigned long lineno;
	size_t off, len;  /* its text in its batch's buffer, line end included */
	bool too_long;    /* longer than max_message_bytes: the text was dropped */
	enum ctl_verdict verdict;
	bool extra;       /* had fields beyond NIP-01's seven, dropped */
	struct event ev;  /* CTL_GOOD, CTL_REFUSED: owned (event_free) */
	char why[200];
};

/*
 * Judges one line: its l->len bytes at text (leading and trailing white
 * space ignored) must be one JSON object, nothing after it, that passes
 * event_parse() once fields beyond NIP-01's seven are dropped, with a
 * signature that v verifies.  Sets l->verdict (CTL_BLANK, CTL_INVALID with
 * l->why, or CTL_GOOD with l->ev owned by l) and l->extra.
 */
void ctl_judge_line(struct sig_verifier *v, uint32_t max_bytes, const char *text,
		    struct ctl_line *l);

/* Threads that judge the lines of a batch together, each with its own
 * verifier. */
struct ctl_judges;

/* threads of them (at least one); NULL when out of memory. */
struct ctl_judges *ctl_judges_new(unsigned threads);
/* Starts judging lines[0..n), each at text + off; text and lines stay the
 * caller's and untouched by it until ctl_judges_wait() returns. */
void ctl_judges_start(struct ctl_judges *j, const char *text, struct ctl_line *lines, size_t n,
		      uint32_t max_bytes);
/* Waits until every line of the batch is judged (here, if no thread could
 * start). */
void ctl_judges_wait(struct ctl_judges *j);
/* NULL-safe; not while a batch is being judged. */
void ctl_judges_free(struct ctl_judges *j);
/* The number of online CPUs, 1 to 64. */
unsigned ctl_cores(void);

/* backup (ctl_backup.c): starts one and waits for it; relayctl's exit status. */
int ctl_backup(struct ctl *c);

#endif
