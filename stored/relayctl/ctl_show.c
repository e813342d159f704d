/* ctl_show.c - relayctl's readable output, one printer per reply (see ctl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/json.h"
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
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_WORKER_LIST), *w;

	if (cJSON_GetArraySize(list) == 0)
		printf("no worker is connected\n");
	cJSON_ArrayForEach(w, list)
		printf("worker %.0f: pid %.0f, up %.0f s, %.0f connections, %.0f subscriptions, "
		       "%.0f messages in, %.0f out, %.0f events rejected, %.0f rate-limited, "
		       "%.0f connections refused, %.0f reads paused, %.0f lane-refused, "
		       "%.0f deliver gaps, %.0f listener restarts, %.0f store timeouts, "
		       "%.0f closed too big, %.0f pings sent, %.0f ping timeouts\n",
		       ctl_num(w, ADMIN_F_WORKER), ctl_num(w, ADMIN_F_PID),
		       ctl_num(w, ADMIN_F_UPTIME_SECONDS),
		       ctl_num(w, ADMIN_F_CONNECTIONS), ctl_num(w, ADMIN_F_SUBSCRIPTIONS),
		       ctl_num(w, ADMIN_F_MESSAGES_IN), ctl_num(w, ADMIN_F_MESSAGES_OUT),
		       ctl_num(w, ADMIN_F_EVENTS_REJECTED), ctl_num(w, ADMIN_F_RATE_LIMITED),
		       ctl_num(w, ADMIN_F_CONNS_REFUSED), ctl_num(w, ADMIN_F_READS_PAUSED),
		       ctl_num(w, ADMIN_F_LANE_REFUSED), ctl_num(w, ADMIN_F_DELIVER_GAPS),
		       ctl_num(w, ADMIN_F_LISTENER_RESTARTS), ctl_num(w, ADMIN_F_STORE_TIMEOUTS),
		       ctl_num(w, ADMIN_F_TOO_BIG_CLOSED), ctl_num(w, ADMIN_F_PINGS_SENT),
		       ctl_num(w, ADMIN_F_PING_TIMEOUTS));
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

	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_SUBSCRIPTIONS)) {
		char *filters = json_print(cJSON_GetObjectItem(s, ADMIN_F_FILTERS), false);
		char *quoted = json_print(cJSON_GetObjectItem(s, ADMIN_F_SUB_ID), false);

		printf("worker %.0f  conn %.0f  sub %s  %s\n", ctl_num(s, ADMIN_F_WORKER),
		       ctl_num(s, ADMIN_F_CONN_ID), quoted ? quoted : "?", filters ? filters : "?");
		free(filters);
		free(quoted);
	}
	printf("%.0f subscriptions", ctl_num(reply, ADMIN_F_TOTAL));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_TRUNCATED)))
		printf(" (%.0f listed)", ctl_num(reply, ADMIN_F_LISTED));
	printf("\n");
}

/* A field of obj holding unix seconds, as UTC text into out. */
static void ctl_when(const cJSON *obj, const char *name, char out[32])
{
	time_t t = (time_t)ctl_num(obj, name);

	strftime(out, 32, "%Y-%m-%d %H:%M:%SZ", gmtime(&t));
}

/* A string field of obj, or "?". */
static const char *ctl_str(const cJSON *obj, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));

	return s ? s : "?";
}

/* "worker 3 did not answer" for each worker the reply names so. */
static void ctl_show_unanswered(const cJSON *reply)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_UNANSWERED))
		printf("worker %.0f did not answer\n", cJSON_GetNumberValue(w));
}

/* The pubkeys of a listed connection, comma-separated, or "-". */
static void ctl_show_pubkeys(const cJSON *conn)
{
	const cJSON *pk;
	int n = 0;

	cJSON_ArrayForEach(pk, cJSON_GetObjectItemCaseSensitive(conn, ADMIN_F_PUBKEYS))
		printf("%s%s", n++ ? "," : "", cJSON_IsString(pk) ? pk->valuestring : "?");
	if (!n)
		printf("-");
}

/* One line per connection, then the count. */
void ctl_show_conns(const cJSON *reply)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_CONN_LIST)) {
		const char *address = ctl_str(c, ADMIN_F_ADDRESS);
		char when[32];

		ctl_when(c, ADMIN_F_SINCE, when);
		printf("worker %.0f  conn %s  %s  since %s  in %.0f  out %.0f  subs %.0f  pubkey ",
		       ctl_num(c, ADMIN_F_WORKER), ctl_str(c, ADMIN_F_CONN_ID),
		       *address ? address : "?", when, ctl_num(c, ADMIN_F_MESSAGES_IN),
		       ctl_num(c, ADMIN_F_MESSAGES_OUT), ctl_num(c, ADMIN_F_SUBSCRIPTIONS));
		ctl_show_pubkeys(c);
		printf("\n");
	}
	printf("%.0f connections", ctl_num(reply, ADMIN_F_TOTAL));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_TRUNCATED)))
		printf(" (truncated: %.0f listed)", ctl_num(reply, ADMIN_F_LISTED));
	printf("\n");
	ctl_show_unanswered(reply);
}

void ctl_show_kick(const cJSON *reply)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_KICKED))
		printf("closed connection %s on worker %.0f\n", ctl_str(reply, ADMIN_F_CONN_ID),
		       cJSON_GetNumberValue(w));
	ctl_show_unanswered(reply);
}

/* The running configuration in the config file's own syntax. */
void ctl_show_config(const cJSON *reply)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_CONFIG)) {
		if (cJSON_IsString(item))
			printf("%s = %s\n", item->string, item->valuestring);
		else
			printf("%s = %.0f\n", item->string, item->valuedouble);
	}
}

void ctl_show_checkpoint(const cJSON *reply)
{
	printf("checkpointed: WAL %.0f bytes -> %.0f bytes; database %.0f bytes\n",
	       ctl_num(reply, ADMIN_F_WAL_BYTES_BEFORE), ctl_num(reply, ADMIN_F_WAL_BYTES),
	       ctl_num(reply, ADMIN_F_DB_BYTES));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_BUSY)))
		printf("a reader kept the checkpoint from completing; try again\n");
}

void ctl_show_vacuum(const cJSON *reply)
{
	printf("vacuumed: database %.0f bytes -> %.0f bytes, WAL %.0f bytes\n",
	       ctl_num(reply, ADMIN_F_DB_BYTES_BEFORE), ctl_num(reply, ADMIN_F_DB_BYTES),
	       ctl_num(reply, ADMIN_F_WAL_BYTES));
}

void ctl_show_delete(const cJSON *reply)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_DRY_RUN)))
		printf("%.0f events match (dry run: nothing deleted)\n",
		       ctl_num(reply, ADMIN_F_MATCHED));
	else
		printf("deleted %.0f events\n", ctl_num(reply, ADMIN_F_DELETED));
}

static const char *ctl_pubkey(const cJSON *reply)
{
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_PUBKEY);

	return cJSON_IsString(pk) ? pk->valuestring : "?";
}

void ctl_show_ban(const cJSON *reply)
{
	const char *pk = ctl_pubkey(reply);

	printf("%s %s\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_WAS_BANNED))
				  ? "still banned (reason updated):"
				  : "banned:",
	       pk);
	printf("its events already stored are kept; to remove them:\n"
	       "  relayctl delete '{\"authors\":[\"%s\"]}'\n", pk);
}

void ctl_show_unban(const cJSON *reply)
{
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_UNBANNED)))
		printf("unbanned: %s\n", ctl_pubkey(reply));
	else
		printf("%s was not banned\n", ctl_pubkey(reply));
}

void ctl_show_bans(const cJSON *reply)
{
	const cJSON *b;

	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_BANS)) {
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(b, ADMIN_F_REASON);
		char when[32];

		ctl_when(b, ADMIN_F_CREATED_AT, when);
		printf("%s  %s  %s\n", ctl_pubkey(b), when,
		       cJSON_IsString(reason) ? reason->valuestring : "");
	}
	printf("%.0f banned pubkeys\n", ctl_num(reply, ADMIN_F_TOTAL));
}
