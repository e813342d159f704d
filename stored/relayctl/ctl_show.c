/* ctl_show.c - relayctl's readable output, one printer per reply (see ctl.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"

/* "name value", the values of every level in one column. */
static void ctl_show_value(const char *indent, const cJSON *item)
{
	int width = 22 - (int)strlen(indent);
	double v = item->valuedouble;

	if (cJSON_IsNumber(item) && v == (double)(long long)v)
		printf("%s%-*s %lld\n", indent, width, item->string, (long long)v);
	else if (cJSON_IsNumber(item))
		printf("%s%-*s %.1f\n", indent, width, item->string, v);
	else if (cJSON_IsString(item))
		printf("%s%-*s %s\n", indent, width, item->string, item->valuestring);
	else if (cJSON_IsBool(item))
		printf("%s%-*s %s\n", indent, width, item->string, cJSON_IsTrue(item) ? "yes" : "no");
}

/* One line per worker. */
void ctl_show_workers(const cJSON *reply)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(reply, "worker_list"), *w;

	if (cJSON_GetArraySize(list) == 0)
		printf("no worker is connected\n");
	cJSON_ArrayForEach(w, list)
		printf("worker %.0f: pid %.0f, up %.0f s, %.0f connections, %.0f subscriptions, "
		       "%.0f messages in, %.0f out, %.0f events rejected, %.0f rate-limited, "
		       "%.0f connections refused, %.0f reads paused, %.0f lane-refused, "
		       "%.0f deliver gaps, %.0f listener restarts, %.0f store timeouts\n",
		       ctl_num(w, "worker"), ctl_num(w, "pid"), ctl_num(w, "uptime_seconds"),
		       ctl_num(w, "connections"), ctl_num(w, "subscriptions"),
		       ctl_num(w, "messages_in"), ctl_num(w, "messages_out"),
		       ctl_num(w, "events_rejected"), ctl_num(w, "rate_limited"),
		       ctl_num(w, "conns_refused"), ctl_num(w, "reads_paused"),
		       ctl_num(w, "lane_refused"), ctl_num(w, "deliver_gaps"),
		       ctl_num(w, "listener_restarts"), ctl_num(w, "store_timeouts"));
}

void ctl_show_stats(const cJSON *reply)
{
	const cJSON *item, *field;

	cJSON_ArrayForEach(item, reply) {
		if (cJSON_IsObject(item)) {
			printf("%s:\n", item->string);
			cJSON_ArrayForEach(field, item)
				ctl_show_value("  ", field);
		} else if (!cJSON_IsArray(item)) {
			ctl_show_value("", item);
		}
	}
	printf("workers:\n");
	ctl_show_workers(reply);
}

void ctl_show_subs(const cJSON *reply)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(reply, "subscriptions")) {
		char *filters = cJSON_PrintUnformatted(cJSON_GetObjectItem(s, "filters"));
		char *quoted = cJSON_PrintUnformatted(cJSON_GetObjectItem(s, "sub_id"));

		printf("worker %.0f  conn %.0f  sub %s  %s\n", ctl_num(s, "worker"),
		       ctl_num(s, "conn_id"), quoted ? quoted : "?", filters ? filters : "?");
		cJSON_free(filters);
		cJSON_free(quoted);
	}
	printf("%.0f subscriptions", ctl_num(reply, "total"));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "truncated")))
		printf(" (%.0f listed)", ctl_num(reply, "listed"));
	printf("\n");
}

/* The running configuration in the config file's own syntax. */
void ctl_show_config(const cJSON *reply)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(reply, "config")) {
		if (cJSON_IsString(item))
			printf("%s = %s\n", item->string, item->valuestring);
		else
			printf("%s = %.0f\n", item->string, item->valuedouble);
	}
}

void ctl_show_checkpoint(const cJSON *reply)
{
	printf("checkpointed: WAL %.0f bytes -> %.0f bytes; database %.0f bytes\n",
	       ctl_num(reply, "wal_bytes_before"), ctl_num(reply, "wal_bytes"),
	       ctl_num(reply, "db_bytes"));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "busy")))
		printf("a reader kept the checkpoint from completing; try again\n");
}

void ctl_show_vacuum(const cJSON *reply)
{
	printf("vacuumed: database %.0f bytes -> %.0f bytes, WAL %.0f bytes\n",
	       ctl_num(reply, "db_bytes_before"), ctl_num(reply, "db_bytes"),
	       ctl_num(reply, "wal_bytes"));
}

void ctl_show_delete(const cJSON *reply)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "dry_run")))
		printf("%.0f events match (dry run: nothing deleted)\n", ctl_num(reply, "matched"));
	else
		printf("deleted %.0f events\n", ctl_num(reply, "deleted"));
}

static const char *ctl_pubkey(const cJSON *reply)
{
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(reply, "pubkey");

	return cJSON_IsString(pk) ? pk->valuestring : "?";
}

void ctl_show_ban(const cJSON *reply)
{
	const char *pk = ctl_pubkey(reply);

	printf("%s %s\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "was_banned"))
				  ? "still banned (reason updated):"
				  : "banned:",
	       pk);
	printf("its events already stored are kept; to remove them:\n"
	       "  relayctl delete '{\"authors\":[\"%s\"]}'\n", pk);
}

void ctl_show_unban(const cJSON *reply)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "unbanned")))
		printf("unbanned: %s\n", ctl_pubkey(reply));
	else
		printf("%s was not banned\n", ctl_pubkey(reply));
}

void ctl_show_bans(const cJSON *reply)
{
	const cJSON *b;

	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(reply, "bans")) {
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(b, "reason");
		time_t at = (time_t)ctl_num(b, "created_at");
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%SZ", gmtime(&at));
		printf("%s  %s  %s\n", ctl_pubkey(b), when,
		       cJSON_IsString(reason) ? reason->valuestring : "");
	}
	printf("%.0f banned pubkeys\n", ctl_num(reply, "total"));
}
