/* admin.c - the admin protocol's command names and version (see admin.h). */
#include "admin.h"

#include <string.h>

static const char *const admin_cmd_names[ADMIN_CMD_LIMIT] = {
	[ADMIN_CMD_STATS] = "stats",
	[ADMIN_CMD_WORKERS] = "workers",
	[ADMIN_CMD_SUBS] = "subs",
	[ADMIN_CMD_CONFIG] = "config",
	[ADMIN_CMD_CHECKPOINT] = "checkpoint",
	[ADMIN_CMD_VACUUM] = "vacuum",
	[ADMIN_CMD_DELETE] = "delete",
	[ADMIN_CMD_BAN] = "ban",
	[ADMIN_CMD_UNBAN] = "unban",
	[ADMIN_CMD_BANS] = "bans",
	[ADMIN_CMD_NIP86] = "nip86",
	[ADMIN_CMD_RETENTION] = "retention",
	[ADMIN_CMD_BACKUP] = "backup",
	[ADMIN_CMD_RELOAD] = "reload",
	[ADMIN_CMD_EXPORT] = "export",
	[ADMIN_CMD_IMPORT] = "import",
	[ADMIN_CMD_CONNS] = "conns",
	[ADMIN_CMD_KICK] = "kick",
};

const char *admin_cmd_name(int cmd)
{
	return cmd >= 0 && cmd < ADMIN_CMD_LIMIT ? admin_cmd_names[cmd] : NULL;
}

int admin_cmd_find(const char *name)
{
	for (int cmd = 0; cmd < ADMIN_CMD_LIMIT; cmd++)
		if (strcmp(name, admin_cmd_names[cmd]) == 0)
			return cmd;
	return -1;
}

int admin_request_version(const cJSON *req)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_V);

	if (!v)
		return 1;
	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65535 ||
	    v->valuedouble != (double)(int)v->valuedouble)
		return -1;
	return (int)v->valuedouble;
}

int admin_request_stamp(cJSON *req, enum admin_cmd cmd)
{
	if (!cJSON_HasObjectItem(req, ADMIN_F_CMD) &&
	    !cJSON_AddStringToObject(req, ADMIN_F_CMD, admin_cmd_name(cmd)))
		return -1;
	if (!cJSON_HasObjectItem(req, ADMIN_F_V) &&
	    !cJSON_AddNumberToObject(req, ADMIN_F_V, ADMIN_VERSION))
		return -1;
	return 0;
}
