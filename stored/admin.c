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
#include "../common/jsonstr.h"
#include "../common/log.h"
#include "admin_cmds.h"
#include "db.h"
#include "stored.h"

static const struct {
	const char *name;
	admin_fn fn;
} admin_commands[] = {
	{ "stats", admin__stats },
	{ "workers", admin__workers },
	{ "subs", admin__subs },
	{ "config", admin__config },
	{ "checkpoint", admin__checkpoint },
	{ "vacuum", admin__vacuum },
	{ "delete", admin__delete },
	{ "ban", admin__ban },
	{ "unban", admin__unban },
	{ "bans", admin__bans },
	{ "nip86", admin__nip86 },
	{ "retention", admin__retention },
	{ "backup", admin__backup },
	{ "reload", admin__reload },
	{ "export", admin__export },
	{ "import", admin__import },
};

#define ADMIN_NCOMMANDS (sizeof(admin_commands) / sizeof(admin_commands[0]))

/* The command word of a request: {"cmd": "..."} or a bare word.  Returns
 * the parsed request (NULL for a bare word or bad JSON). */
static cJSON *admin_request(const char *data, size_t len, char *cmd, size_t cmd_len)
{
	cJSON *req = cJSON_ParseWithLength(data, len);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, "cmd");

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

static cJSON *admin_answer(struct admin *a, const char *cmd, const cJSON *req)
{
	char names[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < ADMIN_NCOMMANDS; i++)
		if (strcmp(cmd, admin_commands[i].name) == 0)
			return admin_commands[i].fn(a, req);
	for (size_t i = 0; i < ADMIN_NCOMMANDS && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, " %s", admin_commands[i].name);
	return admin__error("unknown command '%.64s'; commands:%s", cmd, names);
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
	char cmd[64];
	bool allowed = admin_peer_allowed(msg);
	/* An import's events would be read cut short at the NUL (jsonstr.h). */
	bool nul = allowed && jsonstr_has_nul_escape(nng_msg_body(msg), nng_msg_len(msg));
	cJSON *req = allowed && !nul ? admin_request(nng_msg_body(msg), nng_msg_len(msg), cmd,
						     sizeof(cmd))
				     : NULL;
	cJSON *answer = !allowed ? admin__error("permission denied: only stored's user and root may ask")
			: nul	 ? admin__error("invalid: strings with \\u0000 (NUL) are not supported")
				 : admin_answer(a, cmd, req);
	char *text = cJSON_PrintUnformatted(answer);

	cJSON_Delete(answer);
	cJSON_Delete(req);
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
	unlink(s->admin_at.url + strlen("ipc://"));
	if (nng_listener_create(&s->admin_at.listener, s->admin, s->admin_at.url))
		return ERR_NNG;
	nng_listener_set_int(s->admin_at.listener, NNG_OPT_IPC_PERMISSIONS, 0600);
	if (nng_listener_start(s->admin_at.listener, 0)) {
		log_warnx("listen %s failed", s->admin_at.url);
		return ERR_NNG;
	}
	return 0;
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
