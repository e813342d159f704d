/* admin.c - the operator's JSON request/reply socket (see admin.h). */
#include "admin.h"

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/event_sig.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../common/rundir.h"
#include "../proto/admin.h"
#include "admin_cmds.h"
#include "db.h"
#include "stored.h"

static const admin_fn admin_handlers[ADMIN_CMD_LIMIT] = {
	[ADMIN_CMD_STATS] = admin__stats,
	[ADMIN_CMD_WORKERS] = admin__workers,
	[ADMIN_CMD_SUBS] = admin__subs,
	[ADMIN_CMD_CONFIG] = admin__config,
	[ADMIN_CMD_CHECKPOINT] = admin__checkpoint,
	[ADMIN_CMD_VACUUM] = admin__vacuum,
	[ADMIN_CMD_DELETE] = admin__delete,
	[ADMIN_CMD_BAN] = admin__ban,
	[ADMIN_CMD_UNBAN] = admin__unban,
	[ADMIN_CMD_BANS] = admin__bans,
	[ADMIN_CMD_NIP86] = admin__nip86,
	[ADMIN_CMD_RETENTION] = admin__retention,
	[ADMIN_CMD_BACKUP] = admin__backup,
	[ADMIN_CMD_RELOAD] = admin__reload,
	[ADMIN_CMD_EXPORT] = admin__export,
	[ADMIN_CMD_IMPORT] = admin__import,
	[ADMIN_CMD_CONNS] = admin__conns,
	[ADMIN_CMD_KICK] = admin__kick,
};

admin_fn admin__handler(int cmd)
{
	return cmd >= 0 && cmd < ADMIN_CMD_LIMIT ? admin_handlers[cmd] : NULL;
}

/* The command word of a request: {"cmd": "..."} or a bare word.  Returns
 * the parsed request (NULL for a bare word or bad JSON). */
static cJSON *admin_request(const char *data, size_t len, char *cmd, size_t cmd_len)
{
	cJSON *req = json_parse(data, len, false);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_CMD);

	if (cJSON_IsString(c))
		snprintf(cmd, cmd_len, "%s", c->valuestring);
	else
		snprintf(cmd, cmd_len, "%.*s", (int)(len < cmd_len ? len : cmd_len - 1), data);
	/* nngcat --data may carry a trailing newline. */
	cmd[strcspn(cmd, "\r\n ")] = '\0';
	if (!cJSON_IsObject(req)) {
		cJSON_Delete(req);
		req = NULL;
	}
	return req;
}

/* {"error": why, "v": ADMIN_VERSION} for a request of another version. */
static cJSON *admin_version_error(int v)
{
	cJSON *o = v < 0 ? admin__error("invalid: \"%s\" must be an integer from 1 to 65535",
					ADMIN_F_V)
			 : admin__error("admin protocol version %d is not spoken here; this"
					" stored speaks %d", v, ADMIN_VERSION);

	cJSON_AddNumberToObject(o, ADMIN_F_V, ADMIN_VERSION);
	return o;
}

static cJSON *admin_answer(struct admin *a, const char *cmd, const cJSON *req)
{
	int v = admin_request_version(req), found = admin_cmd_find(cmd);
	char names[256] = "";
	size_t len = 0;

	if (v != ADMIN_VERSION)
		return admin_version_error(v);
	if (found >= 0)
		return admin_handlers[found](a, req);
	for (int i = 0; i < ADMIN_CMD_LIMIT && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, " %s", admin_cmd_name(i));
	return admin__error("unknown command '%.64s'; commands:%s", cmd, names);
}

cJSON *admin__reply(struct admin *a, const char *data, size_t len)
{
	char cmd[64];
	cJSON *req, *answer;

	req = admin_request(data, len, cmd, sizeof(cmd));
	answer = admin_answer(a, cmd, req);
	cJSON_Delete(req);
	return answer;
}

/* The socket file is mode 0600 already; the peer's uid (which nng reads
 * from the kernel for IPC) is checked too, in case the mode is loosened. */
static bool admin_peer_allowed(nng_msg *msg)
{
	uint64_t uid;

	if (nng_pipe_get_uint64(nng_msg_get_pipe(msg), NNG_OPT_IPC_PEER_UID, &uid))
		return false;
	return uid == 0 || uid == (uint64_t)getuid();
}

static void admin_serve(struct admin *a, nng_msg *msg)
{
	cJSON *answer =
		admin_peer_allowed(msg)
			? admin__reply(a, nng_msg_body(msg), nng_msg_len(msg))
			: admin__error("permission denied: only stored's user and root may ask");
	char *text = json_print(answer, false);

	cJSON_Delete(answer);
	nng_msg_clear(msg);
	if (!text || nng_msg_append(msg, text, strlen(text)) || nng_sendmsg(a->s->admin, msg, 0))
		nng_msg_free(msg);
	free(text);
}

static void *admin_main(void *arg)
{
	struct admin *a = arg;
	nng_msg *req;
	int rv;

	pthread_setname_np(pthread_self(), "admin"); /* for top -H, perf */
	/* Wake at least once a second to sample the counters behind the rates. */
	nng_socket_set_ms(a->s->admin, NNG_OPT_RECVTIMEO, 1000);
	for (;;) {
		rv = nng_recvmsg(a->s->admin, &req, 0);
		admin__sample(a);
		if (rv == NNG_ETIMEDOUT)
			continue;
		if (rv)
			break;
		admin_serve(a, req);
	}
	db_close(a->db);
	sig_verifier_free(a->verifier);
	free(a);
	return NULL;
}

/* Largest request: an import batch of events up to max_message_bytes. */
static size_t admin_max_request(const struct stored *s)
{
	return 2 * (size_t)s->cfg.max_message_bytes + 4 * 1048576;
}

/* Listens on s->admin_at (only the owner may steer the relay). */
static int admin_listen_at(struct stored *s)
{
	return rundir_listen(s->admin, s->admin_at.url, RUNDIR_OWNER, &s->cfg, &s->admin_at.listener);
}

static int admin_listen(struct stored *s)
{
	if (config_socket_url(&s->cfg, "stored-admin.ipc", s->admin_at.url, sizeof(s->admin_at.url)) ||
	    nng_rep0_open(&s->admin))
		return ERR_NNG;
	nng_socket_set_size(s->admin, NNG_OPT_RECVMAXSZ, admin_max_request(s));
	return admin_listen_at(s);
}

int admin_relisten(void *arg)
{
	struct stored *s = arg;

	nng_listener_close(s->admin_at.listener);
	return admin_listen_at(s);
}

int admin_start(struct stored *s, pthread_t *thread)
{
	struct admin *a = calloc(1, sizeof(*a));

	if (!a)
		return ERR_NOMEM;
	a->s = s;
	a->started = time(NULL);
	rate_init(&a->ingest);
	rate_init(&a->queries);
	a->verifier = sig_verifier_new();
	if (!a->verifier || admin_listen(s) || db_open(s->db_path, false, NULL, &a->db) ||
	    pthread_create(thread, NULL, admin_main, a)) {
		db_close(a->db);
		sig_verifier_free(a->verifier);
		free(a);
		return ERR_NNG;
	}
	return 0;
}
