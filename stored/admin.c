/* admin.c - the operator's JSON request/reply socket (see admin.h). */
#include "admin.h"

#include <cjson/cJSON.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/log.h"
#include "db.h"
#include "queue.h"
#include "stored.h"

struct admin {
	struct stored *s;
	sqlite3 *db;
	time_t started;
};

static uint64_t admin_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void admin_add_u64(cJSON *obj, const char *name, uint64_t v)
{
	cJSON_AddNumberToObject(obj, name, (double)v);
}

static cJSON *admin_workers(struct stored *s)
{
	cJSON *list = cJSON_CreateArray();

	pthread_mutex_lock(&s->workers_lock);
	for (int w = 0; w < STORED_MAX_WORKERS; w++) {
		const struct stored_worker_report *r = &s->workers[w];
		cJSON *item;

		if (!r->present)
			continue;
		item = cJSON_CreateObject();
		cJSON_AddNumberToObject(item, "worker", w);
		admin_add_u64(item, "pid", r->pid);
		admin_add_u64(item, "started_at", r->started_at);
		admin_add_u64(item, "connections", r->connections);
		admin_add_u64(item, "subscriptions", r->subscriptions);
		admin_add_u64(item, "messages_in", r->messages_in);
		admin_add_u64(item, "messages_out", r->messages_out);
		admin_add_u64(item, "events_rejected", r->events_rejected);
		admin_add_u64(item, "deliver_gaps", r->deliver_gaps);
		cJSON_AddItemToArray(list, item);
	}
	pthread_mutex_unlock(&s->workers_lock);
	return list;
}

static cJSON *admin_stats(struct admin *a)
{
	struct stored *s = a->s;
	cJSON *o = cJSON_CreateObject();
	char wal[sizeof(s->db_path) + 8];
	uint64_t events = 0;
	cJSON *workers = admin_workers(s);

	db_count_events(a->db, &events);
	snprintf(wal, sizeof(wal), "%s-wal", s->db_path);
	admin_add_u64(o, "events", events);
	admin_add_u64(o, "db_bytes", admin_file_size(s->db_path));
	admin_add_u64(o, "wal_bytes", admin_file_size(wal));
	admin_add_u64(o, "uptime_seconds", (uint64_t)(time(NULL) - a->started));
	admin_add_u64(o, "workers_connected", (uint64_t)cJSON_GetArraySize(workers));
	admin_add_u64(o, "subscriptions", atomic_load(&s->stats.subscriptions));
	admin_add_u64(o, "events_accepted", atomic_load(&s->stats.events_accepted));
	admin_add_u64(o, "events_duplicate", atomic_load(&s->stats.events_duplicate));
	admin_add_u64(o, "events_failed", atomic_load(&s->stats.events_rejected));
	admin_add_u64(o, "ephemeral_delivered", atomic_load(&s->stats.ephemeral_delivered));
	admin_add_u64(o, "queries", atomic_load(&s->stats.queries));
	admin_add_u64(o, "deliveries", atomic_load(&s->stats.deliveries));
	admin_add_u64(o, "commits", atomic_load(&s->stats.commits));
	admin_add_u64(o, "bad_requests", atomic_load(&s->stats.rpc_bad));
	admin_add_u64(o, "write_queue", queue_length(s->write_q));
	admin_add_u64(o, "query_queue", queue_length(s->query_q));
	cJSON_AddItemToObject(o, "worker_list", workers);
	return o;
}

/* The command word of a request: {"cmd": "..."} or a bare word. */
static void admin_command(const char *data, size_t len, char *cmd, size_t cmd_len)
{
	cJSON *req = cJSON_ParseWithLength(data, len);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(req, "cmd");

	if (cJSON_IsString(c))
		snprintf(cmd, cmd_len, "%s", c->valuestring);
	else
		snprintf(cmd, cmd_len, "%.*s", (int)(len < cmd_len ? len : cmd_len - 1), data);
	cJSON_Delete(req);
	/* nngcat --data may carry a trailing newline. */
	cmd[strcspn(cmd, "\r\n ")] = '\0';
}

static cJSON *admin_answer(struct admin *a, const char *cmd)
{
	cJSON *o;

	if (strcmp(cmd, "stats") == 0)
		return admin_stats(a);
	if (strcmp(cmd, "workers") == 0) {
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "worker_list", admin_workers(a->s));
		return o;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", "unknown command; try stats or workers");
	return o;
}

static void admin_serve(struct admin *a, nng_msg *req)
{
	char cmd[64];
	cJSON *answer;
	char *text;

	admin_command(nng_msg_body(req), nng_msg_len(req), cmd, sizeof(cmd));
	answer = admin_answer(a, cmd);
	text = cJSON_PrintUnformatted(answer);
	cJSON_Delete(answer);
	nng_msg_clear(req);
	if (!text || nng_msg_append(req, text, strlen(text)) || nng_msg_append(req, "\n", 1) ||
	    nng_sendmsg(a->s->admin, req, 0))
		nng_msg_free(req);
	free(text);
}

static void *admin_main(void *arg)
{
	struct admin *a = arg;
	nng_msg *req;

	while (nng_recvmsg(a->s->admin, &req, 0) == 0)
		admin_serve(a, req);
	db_close(a->db);
	free(a);
	return NULL;
}

static int admin_listen(struct stored *s)
{
	char url[256];
	nng_listener l;

	config_socket_url(&s->cfg, "stored-admin.ipc", url, sizeof(url));
	unlink(url + strlen("ipc://"));
	if (nng_rep0_open(&s->admin) || nng_listener_create(&l, s->admin, url))
		return ERR_NNG;
	/* Only the owner may steer the relay. */
	nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0600);
	if (nng_listener_start(l, 0)) {
		log_warnx("listen %s failed", url);
		return ERR_NNG;
	}
	return 0;
}

int admin_start(struct stored *s, pthread_t *thread)
{
	struct admin *a = calloc(1, sizeof(*a));

	if (!a)
		return ERR_NOMEM;
	a->s = s;
	a->started = time(NULL);
	if (admin_listen(s) || db_open(s->db_path, false, NULL, &a->db) ||
	    pthread_create(thread, NULL, admin_main, a)) {
		db_close(a->db);
		free(a);
		return ERR_NNG;
	}
	return 0;
}
