/*
 * admin_reload.c - the admin command "reload": the same as `systemctl
 * reload` of stored and of every running relayd@N (relay.target itself
 * cannot be reloaded).  stored sends SIGHUP to itself and to every worker
 * connected to it (their pids come from HELLO); each then re-reads the
 * config file as described in the README.  The reply lists who was asked.
 */
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include "admin_cmds.h"
#include "stored.h"

cJSON *admin__reload(struct admin *a, const cJSON *req)
{
	struct stored *s = a->s;
	cJSON *reply = cJSON_CreateObject();
	cJSON *workers = cJSON_AddArrayToObject(reply, ADMIN_F_WORKERS);

	pthread_mutex_lock(&s->workers_lock);
	for (int w = 0; w < STORED_MAX_WORKERS; w++) {
		if (!s->workers[w].present || s->workers[w].pid == 0)
			continue;
		if (kill((pid_t)s->workers[w].pid, SIGHUP) == 0)
			cJSON_AddItemToArray(workers, cJSON_CreateNumber(w));
	}
	pthread_mutex_unlock(&s->workers_lock);
	cJSON_AddBoolToObject(reply, ADMIN_F_STORED, kill(getpid(), SIGHUP) == 0);
	return reply;
}
