/*
 * relayctl.c - the operator's client for stored's admin socket.
 *
 * Usage: relayctl [-c CONFIG] [--json] COMMAND [ARGS] | relayctl --version
 * It reads the same config file as the daemons to find run_dir (without
 * -c: $CRELAY_CONFIG, /etc/crelay/relay.conf, ./etc/relay.conf), sends the
 * command to stored-admin.ipc as a JSON request and prints the reply, as
 * readable text or, with --json, as the JSON stored sent.  Options may come
 * before or after the command.  Exit status: 0 on an answer, 1 when stored
 * cannot be reached or answers with an error, 2 on bad usage.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/confpath.h"
#include "../../common/npub.h"
#include "../../common/version.h"
#include "../../common/json.h"
#include "ctl.h"

typedef int (*ctl_build_fn)(struct ctl *c, cJSON *req);

struct ctl_command {
	enum admin_cmd cmd;    /* what it asks stored (sync: export and import) */
	const char *name;      /* NULL: admin_cmd_name(cmd) */
	const char *args;      /* usage of its arguments */
	int min_args, max_args;
	ctl_build_fn build;    /* adds the arguments to the request; 0 or 2 (usage) */
	void (*show)(const cJSON *reply);
	int (*run)(struct ctl *c); /* instead of one request: export, import */
};

/* A whole number of at most max from text into *out; 0, or -1 when text
 * is anything else. */
static int ctl_number(const char *text, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(text, &end, 10);
	return errno || text[0] < '0' || text[0] > '9' || *end || *out > max ? -1 : 0;
}

/* subs [MAX], conns [MAX] */
static int ctl_build_max(struct ctl *c, cJSON *req)
{
	unsigned long long max;

	if (!c->nargs)
		return 0;
	if (ctl_number(c->args[0], 1000000000ull, &max)) {
		fprintf(stderr, "relayctl: %s takes a number of %s, not '%s'\n", c->command,
			c->cmd == ADMIN_CMD_SUBS ? "subscriptions" : "connections", c->args[0]);
		return 2; /* bad usage, as the README says */
	}
	cJSON_AddNumberToObject(req, ADMIN_F_MAX, (double)max);
	return 0;
}

/* The words of args from first on, joined by spaces, so that a reason
 * needs no quoting (at most len - 1 bytes). */
static void ctl_join(const struct ctl *c, int first, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = first; i < c->nargs && used < len - 1; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%s", i > first ? " " : "",
					 c->args[i]);
}

/* kick CONN [REASON...]: CONN as relayctl conns shows it, sent as the
 * decimal string it is (ids pass 2^53, stored/admin.h). */
static int ctl_build_kick(struct ctl *c, cJSON *req)
{
	unsigned long long id;
	char reason[256];

	if (ctl_number(c->args[0], ULLONG_MAX, &id) || id == 0) {
		fprintf(stderr, "relayctl: kick takes a connection id from relayctl conns, not '%s'\n",
			c->args[0]);
		return 2;
	}
	ctl_join(c, 1, reason, sizeof(reason));
	cJSON_AddStringToObject(req, ADMIN_F_CONN_ID, c->args[0]);
	if (reason[0])
		cJSON_AddStringToObject(req, ADMIN_F_REASON, reason);
	return 0;
}

static int ctl_build_delete(struct ctl *c, cJSON *req)
{
	cJSON *filter = json_parse(c->args[0], strlen(c->args[0]), false);

	if (!filter) {
		fprintf(stderr, "relayctl: the filter is not valid JSON: %s\n", c->args[0]);
		return 2;
	}
	cJSON_AddItemToObject(req, ADMIN_F_FILTER, filter);
	cJSON_AddBoolToObject(req, ADMIN_F_DRY_RUN, c->dry_run);
	return 0;
}

/* ban PUBKEY [REASON...], unban PUBKEY: the key as hex or as an npub
 * (NIP-19), sent as hex. */
static int ctl_build_ban(struct ctl *c, cJSON *req)
{
	char reason[256], hex[65];

	if (npub_to_hex(c->args[0], hex)) {
		fprintf(stderr, "relayctl: %s takes a pubkey as 64 hex digits or npub1..., not '%s'\n",
			c->command, c->args[0]);
		return 2;
	}
	cJSON_AddStringToObject(req, ADMIN_F_PUBKEY, hex);
	ctl_join(c, 1, reason, sizeof(reason));
	cJSON_AddStringToObject(req, ADMIN_F_REASON, reason);
	return 0;
}

/* nip86 METHOD [PARAM...]: a NIP-86 request; all-digit parameters are
 * numbers (kinds), the rest strings. */
static int ctl_build_nip86(struct ctl *c, cJSON *req)
{
	cJSON *request = cJSON_CreateObject(), *params = cJSON_CreateArray();

	cJSON_AddStringToObject(request, ADMIN_F_METHOD, c->args[0]);
	for (int i = 1; i < c->nargs; i++) {
		const char *a = c->args[i];
		int digits = a[0] != '\0' && strspn(a, "0123456789") == strlen(a) && strlen(a) < 10;

		cJSON_AddItemToArray(params, digits ? cJSON_CreateNumber(atoi(a)) : cJSON_CreateString(a));
	}
	cJSON_AddItemToObject(request, ADMIN_F_PARAMS, params);
	cJSON_AddItemToObject(req, ADMIN_F_REQUEST, request);
	return 0;
}

static void ctl_show_nip86(const cJSON *reply)
{
	char *text = json_print(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_RESULT), true);

	printf("%s\n", text ? text : "null");
	free(text);
}

static void ctl_show_retention(const cJSON *reply)
{
	const cJSON *rule;

	printf("retention = %s\n",
	       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_RETENTION)));
	cJSON_ArrayForEach(rule, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_RULES))
		printf("rule %.0f (%.0f days): would delete %.0f events now\n",
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rule, ADMIN_F_RULE)),
		       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rule, ADMIN_F_DAYS)),
		       cJSON_GetNumberValue(
			       cJSON_GetObjectItemCaseSensitive(rule, ADMIN_F_WOULD_DELETE)));
}

static void ctl_show_reload(const cJSON *reply)
{
	const cJSON *w;

	printf("stored: %s\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_STORED))
					 ? "reloading" : "not signalled");
	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_WORKERS))
		printf("relayd@%.0f: reloading\n", cJSON_GetNumberValue(w));
}

static const struct ctl_command ctl_commands[] = {
	{ ADMIN_CMD_STATS, NULL, "", 0, 0, NULL, ctl_show_stats, NULL },
	{ ADMIN_CMD_WORKERS, NULL, "", 0, 0, NULL, ctl_show_workers, NULL },
	{ ADMIN_CMD_SUBS, NULL, "[MAX]", 0, 1, ctl_build_max, ctl_show_subs, NULL },
	{ ADMIN_CMD_CONNS, NULL, "[MAX]", 0, 1, ctl_build_max, ctl_show_conns, NULL },
	{ ADMIN_CMD_KICK, NULL, "CONN [REASON...]", 1, 64, ctl_build_kick, ctl_show_kick, NULL },
	{ ADMIN_CMD_CONFIG, NULL, "", 0, 0, NULL, ctl_show_config, NULL },
	{ ADMIN_CMD_CHECKPOINT, NULL, "", 0, 0, NULL, ctl_show_checkpoint, NULL },
	{ ADMIN_CMD_VACUUM, NULL, "", 0, 0, NULL, ctl_show_vacuum, NULL },
	{ ADMIN_CMD_DELETE, NULL, "FILTER [--dry-run]", 1, 1, ctl_build_delete, ctl_show_delete, NULL },
	{ ADMIN_CMD_BAN, NULL, "PUBKEY [REASON...]", 1, 64, ctl_build_ban, ctl_show_ban, NULL },
	{ ADMIN_CMD_UNBAN, NULL, "PUBKEY", 1, 1, ctl_build_ban, ctl_show_unban, NULL },
	{ ADMIN_CMD_BANS, NULL, "", 0, 0, NULL, ctl_show_bans, NULL },
	{ ADMIN_CMD_EXPORT, NULL, "[FILTER] > FILE.jsonl", 0, 1, NULL, NULL, ctl_export },
	{ ADMIN_CMD_IMPORT, NULL, "[FILE.jsonl] (or < FILE.jsonl)", 0, 1, NULL, NULL, ctl_import },
	{ ADMIN_CMD_NIP86, NULL, "METHOD [PARAM...]", 1, 8, ctl_build_nip86, ctl_show_nip86, NULL },
	{ ADMIN_CMD_RETENTION, NULL, "", 0, 0, NULL, ctl_show_retention, NULL },
	{ ADMIN_CMD_RELOAD, NULL, "", 0, 0, NULL, ctl_show_reload, NULL },
	{ ADMIN_CMD_BACKUP, NULL, "[PATH]", 0, 1, NULL, NULL, ctl_backup },
	{ ADMIN_CMD_EXPORT, "sync", "URL [FILTER] [--dir down|up|both] [--dry-run]", 1, 2, NULL, NULL, ctl_sync },
	{ ADMIN_CMD_IMPORT, "stream", "URL [FILTER]", 1, 2, NULL, NULL, ctl_stream },
};

#define CTL_NCOMMANDS (sizeof(ctl_commands) / sizeof(ctl_commands[0]))

static const char *ctl_name(const struct ctl_command *cmd)
{
	return cmd->name ? cmd->name : admin_cmd_name(cmd->cmd);
}

static void ctl_usage(void)
{
	fprintf(stderr, "usage: relayctl [-c CONFIG] [--json] COMMAND [ARGS] | relayctl --version\n"
			"commands:\n");
	for (size_t i = 0; i < CTL_NCOMMANDS; i++)
		fprintf(stderr, "  %s %s\n", ctl_name(&ctl_commands[i]), ctl_commands[i].args);
	exit(2);
}

static void ctl_version(void)
{
	version_print(stdout, "relayctl");
	exit(0);
}

/* Options anywhere; the first other word is the command, the rest its
 * arguments ("--" ends the options, for a reason starting with '-'). */
static void ctl_parse(int argc, char **argv, struct ctl *c)
{
	int options = 1;

	c->args = calloc((size_t)argc, sizeof(char *));
	if (!c->args)
		exit(1);
	for (int i = 1; i < argc; i++) {
		if (options && strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			c->config_path = argv[++i];
		else if (options && strcmp(argv[i], "--json") == 0)
			c->json = 1;
		else if (options && strcmp(argv[i], "--dry-run") == 0)
			c->dry_run = 1;
		else if (options && strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			c->dir = argv[++i];
		else if (options && strcmp(argv[i], "--") == 0)
			options = 0;
		else if (options && strcmp(argv[i], "--version") == 0)
			ctl_version();
		else if (options && argv[i][0] == '-' && argv[i][1])
			ctl_usage();
		else if (!c->command)
			c->command = argv[i];
		else
			c->args[c->nargs++] = argv[i];
	}
	if (!c->command)
		ctl_usage();
}

/* The config file: -c, else $CRELAY_CONFIG, else an install's, else the
 * checkout's (confpath.h); NULL leaves the defaults. */
static const char *ctl_config_path(const char *given)
{
	static const char *const candidates[] = { CONFPATH_SYSTEM, CONFPATH_LOCAL };

	return confpath_pick(given, getenv(CONFPATH_ENV), candidates, 2);
}

/* One request, one reply, printed. */
static int ctl_simple(struct ctl *c, const struct ctl_command *cmd)
{
	cJSON *req = cJSON_CreateObject(), *reply = NULL;
	char *text = NULL;
	int status = cmd->build ? cmd->build(c, req) : 0;

	if (status == 0)
		status = ctl_call(c, req, &reply, &text);
	cJSON_Delete(req);
	if (status)
		return status;
	status = ctl_failed(reply);
	if (!status && c->json)
		printf("%s\n", text);
	else if (!status)
		cmd->show(reply);
	cJSON_Delete(reply);
	free(text);
	return status;
}

int main(int argc, char **argv)
{
	struct ctl c;
	const struct ctl_command *cmd = NULL;
	char err[512];
	int status;

	memset(&c, 0, sizeof(c));
	ctl_parse(argc, argv, &c);
	for (size_t i = 0; i < CTL_NCOMMANDS; i++)
		if (!strcmp(ctl_name(&ctl_commands[i]), c.command))
			cmd = &ctl_commands[i];
	if (!cmd || c.nargs < cmd->min_args || c.nargs > cmd->max_args ||
	    (c.dry_run && cmd->cmd != ADMIN_CMD_DELETE && cmd->run != ctl_sync) || (c.dir && cmd->run != ctl_sync))
		ctl_usage();
	c.cmd = cmd->cmd;
	c.config_path = ctl_config_path(c.config_path);
	if (config_load(c.config_path, &c.cfg, err, sizeof(err))) {
		fprintf(stderr, "relayctl: config: %s\n", err);
		return 2;
	}
	if (ctl_open(&c))
		return 1;
	status = cmd->run ? cmd->run(&c) : ctl_simple(&c, cmd);
	nng_close(c.sock);
	free(c.args);
	return status;
}
