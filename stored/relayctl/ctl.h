/*
 * ctl.h - relayctl's parts: the arguments and the command table
 * (relayctl.c), the connection to stored's admin socket (ctl_call.c), the
 * human-readable printers (ctl_show.c), the event transfers that take
 * several requests (ctl_data.c) and the backup, which waits for stored to
 * finish it (ctl_backup.c).
 */
#ifndef RELAYCTL_CTL_H
#define RELAYCTL_CTL_H

#include <cjson/cJSON.h>
#include <nng/nng.h>

#include "../../common/config.h"
#include "../../proto/admin.h"

struct ctl {
	struct config cfg;
	const char *config_path;
	const char *command;
	enum admin_cmd cmd; /* the command named by command */
	char **args; /* the command's own arguments */
	int nargs;
	int json;    /* --json: print stored's JSON as it came */
	int dry_run; /* --dry-run (delete) */
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
/* backup (ctl_backup.c): starts one and waits for it; relayctl's exit status. */
int ctl_backup(struct ctl *c);

#endif
