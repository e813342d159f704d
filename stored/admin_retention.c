/*
 * admin_retention.c - the admin command "retention": what the configured
 * retention rules (retention.h) would remove now, rule by rule, counted on
 * the admin's read connection.  Nothing is deleted; the writer's periodic
 * job does that every expire_interval seconds.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/buf.h"
#include "../common/retention.h"
#include "admin_cmds.h"
#include "stored.h"

static int64_t retention_count(struct admin *a, const struct retention *r, uint32_t i, int64_t now)
{
	struct buf sql = BUF_INIT;
	sqlite3_stmt *st;
	int64_t n = -1;

	if (buf_append_str(&sql, "SELECT count(*) FROM events WHERE ") ||
	    retention_where(r, i, now, &sql) ||
	    sqlite3_prepare_v2(a->db, sql.data, -1, &st, NULL) != SQLITE_OK) {
		buf_free(&sql);
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	buf_free(&sql);
	return n;
}

cJSON *admin__retention(struct admin *a, const cJSON *req)
{
	struct retention rules;
	char err[160];
	int64_t now = (int64_t)time(NULL);
	cJSON *reply, *list;

	if (retention_parse(a->s->cfg.retention, &rules, err, sizeof(err)))
		return admin__error("%s", err);
	reply = cJSON_CreateObject();
	cJSON_AddStringToObject(reply, ADMIN_F_RETENTION, a->s->cfg.retention);
	list = cJSON_AddArrayToObject(reply, ADMIN_F_RULES);
	for (uint32_t i = 0; i < rules.nrules; i++) {
		cJSON *item = cJSON_CreateObject();
		int64_t n = retention_count(a, &rules, i, now);

		cJSON_AddNumberToObject(item, ADMIN_F_RULE, i + 1);
		cJSON_AddNumberToObject(item, ADMIN_F_DAYS, rules.rule[i].days);
		cJSON_AddNumberToObject(item, ADMIN_F_WOULD_DELETE, (double)n);
		cJSON_AddItemToArray(list, item);
	}
	return reply;
}
