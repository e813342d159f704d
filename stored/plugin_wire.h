/*
 * plugin_wire.h - the JSON lines stored exchanges with a write-policy
 * plugin, in strfry's plugin format.
 *
 * Request, one line on the plugin's stdin:
 *   {"type":"new","event":{...},"receivedAt":<unix s>,
 *    "sourceType":"IP4"|"IP6"|"Import"|"Stream"|"Sync","sourceInfo":"<text>"}
 * Answer, one line on its stdout:
 *   {"id":"<event id>","action":"accept"|"reject"|"shadowReject","msg":"<text>"}
 * The answer's msg is optional.  Answers may come in any order: the id
 * names the request.
 */
#ifndef STORED_PLUGIN_WIRE_H
#define STORED_PLUGIN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/event.h"

struct buf;

/* Where an event came from.  Stream and Sync are for events a future
 * relayctl stream or sync pulls from another relay. */
enum plugin_source {
	PLUGIN_SOURCE_IP4,
	PLUGIN_SOURCE_IP6,
	PLUGIN_SOURCE_IMPORT,
	PLUGIN_SOURCE_STREAM,
	PLUGIN_SOURCE_SYNC,
};

enum plugin_action {
	PLUGIN_ACCEPT,
	PLUGIN_REJECT,
	PLUGIN_SHADOW_REJECT,
};

/* The longest msg kept from an answer, in bytes (longer ones are cut). */
#define PLUGIN_MSG_MAX 200

struct plugin_answer {
	uint8_t id[EVENT_ID_LEN];
	enum plugin_action action;
	char msg[PLUGIN_MSG_MAX + 1]; /* NUL-terminated; "" when absent */
};

/* The source type of a client at address ip (text): IP6 when it holds a
 * colon, else IP4. */
enum plugin_source plugin_wire_source_of(const char *ip);

/* Appends the request line for ev (its canonical JSON, which holds no
 * newline) and the trailing newline to out.  info is the sourceInfo text.
 * Returns 0, or ERR_NOMEM with out possibly grown. */
int plugin_wire_request(struct buf *out, const struct event *ev, int64_t received_at,
			enum plugin_source source, const char *info);

/* Parses one answer line of len bytes (no newline) into *a.  Returns 0, or
 * ERR_INVAL when it is not a JSON object with a 64-hex id and a known
 * action, or msg is not a string. */
int plugin_wire_answer(const char *line, size_t len, struct plugin_answer *a);

#endif
