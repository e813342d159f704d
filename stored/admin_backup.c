/*
 * admin_backup.c - the admin command "backup": {"cmd": "backup", "path":
 * "/abs/file.db"} starts a consistent copy of relay.db while the relay runs
 * (backup.h) and answers at once; {"cmd": "backup"} without a path reports
 * how the running or last backup stands.  relayctl backup PATH asks for one
 * and then polls until it ends, so a copy longer than relayctl's wait for
 * one reply is no problem.
 */
#include "admin_cmds.h"
#include "backup.h"
#include "stored.h"

static const char *admin_backup_state(enum backup_state state)
{
	switch (state) {
	case BACKUP_RUNNING: return ADMIN_BACKUP_RUNNING;
	case BACKUP_DONE: return ADMIN_BACKUP_DONE;
	case BACKUP_FAILED: return ADMIN_BACKUP_FAILED;
	default: return ADMIN_BACKUP_NONE;
	}
}

static cJSON *admin_backup_status(struct admin *a)
{
	struct backup_status st;
	cJSON *reply = cJSON_CreateObject();

	backup_status(a->s->backup, &st);
	cJSON_AddStringToObject(reply, ADMIN_F_STATE, admin_backup_state(st.state));
	cJSON_AddStringToObject(reply, ADMIN_F_PATH, st.path);
	admin__add_u64(reply, ADMIN_F_PAGES_DONE, st.pages_done);
	admin__add_u64(reply, ADMIN_F_PAGES_TOTAL, st.pages_total);
	admin__add_u64(reply, ADMIN_F_EVENTS, st.events);
	admin__add_u64(reply, ADMIN_F_MAX_SEQ, st.max_seq);
	admin__add_u64(reply, ADMIN_F_BYTES, st.bytes);
	admin__add_u64(reply, "wal_checkpointed", st.wal_checkpointed);
	cJSON_AddNumberToObject(reply, ADMIN_F_SECONDS, st.seconds);
	if (st.state == BACKUP_FAILED)
		cJSON_AddStringToObject(reply, ADMIN_F_FAILURE, st.error);
	return reply;
}

cJSON *admin__backup(struct admin *a, const cJSON *req)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_PATH);
	char why[512];

	if (!path)
		return admin_backup_status(a);
	if (!cJSON_IsString(path))
		return admin__error("path must be a string");
	if (backup_start(a->s->backup, path->valuestring, why, sizeof(why)))
		return admin__error("%s", why);
	return admin_backup_status(a);
}
