/* plugin_wire.c - the plugin's JSON lines (see plugin_wire.h). */
#include "plugin_wire.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/err.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "../common/jsonstr.h"

static const char *const plugin_source_names[] = {
	[PLUGIN_SOURCE_IP4] = "IP4",
	[PLUGIN_SOURCE_IP6] = "IP6",
	[PLUGIN_SOURCE_IMPORT] = "Import",
	[PLUGIN_SOURCE_STREAM] = "Stream",
	[PLUGIN_SOURCE_SYNC] = "Sync",
};

static const char *const plugin_action_names[] = {
	[PLUGIN_ACCEPT] = "accept",
	[PLUGIN_REJECT] = "reject",
	[PLUGIN_SHADOW_REJECT] = "shadowReject",
};

enum plugin_source plugin_wire_source_of(const char *ip)
{
	return strchr(ip, ':') ? PLUGIN_SOURCE_IP6 : PLUGIN_SOURCE_IP4;
}

int plugin_wire_request(struct buf *out, const struct event *ev, int64_t received_at,
			enum plugin_source source, const char *info)
{
	if (buf_append_str(out, "{\"type\":\"new\",\"event\":") ||
	    buf_append(out, ev->json, ev->json_len) ||
	    buf_append_str(out, ",\"receivedAt\":") || buf_append_int(out, received_at) ||
	    buf_append_str(out, ",\"sourceType\":\"") ||
	    buf_append_str(out, plugin_source_names[source]) ||
	    buf_append_str(out, "\",\"sourceInfo\":") ||
	    jsonstr_append_wire(out, info, strlen(info)) || buf_append_str(out, "}\n"))
		return ERR_NOMEM;
	return 0;
}

static int plugin_wire_action(const cJSON *action, enum plugin_action *out)
{
	if (!cJSON_IsString(action))
		return ERR_INVAL;
	for (size_t i = 0; i < sizeof(plugin_action_names) / sizeof(plugin_action_names[0]); i++) {
		if (strcmp(action->valuestring, plugin_action_names[i]) == 0) {
			*out = (enum plugin_action)i;
			return 0;
		}
	}
	return ERR_INVAL;
}

/* The one JSON value of the line (json.h), or NULL (also when text
 * follows it). */
static cJSON *plugin_wire_parse(const char *line, size_t len)
{
	return json_parse(line, len, true);
}

/* Copies at most PLUGIN_MSG_MAX bytes of text, cut before a UTF-8
 * character rather than inside it. */
static void plugin_wire_copy_msg(char out[PLUGIN_MSG_MAX + 1], const char *text)
{
	size_t n = strnlen(text, PLUGIN_MSG_MAX + 1);

	if (n > PLUGIN_MSG_MAX) {
		n = PLUGIN_MSG_MAX;
		while (n && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, text, n);
	out[n] = '\0';
}

int plugin_wire_answer(const char *line, size_t len, struct plugin_answer *a)
{
	cJSON *obj = plugin_wire_parse(line, len);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "msg");
	int rc = ERR_INVAL;

	memset(a, 0, sizeof(*a));
	if (cJSON_IsObject(obj) && cJSON_IsString(id) &&
	    strlen(id->valuestring) == 2 * EVENT_ID_LEN &&
	    hex_decode(id->valuestring, 2 * EVENT_ID_LEN, a->id, EVENT_ID_LEN) == 0 &&
	    plugin_wire_action(cJSON_GetObjectItemCaseSensitive(obj, "action"), &a->action) == 0 &&
	    (!msg || cJSON_IsString(msg) || cJSON_IsNull(msg))) {
		if (cJSON_IsString(msg))
			plugin_wire_copy_msg(a->msg, msg->valuestring);
		rc = 0;
	}
	cJSON_Delete(obj);
	return rc;
}
