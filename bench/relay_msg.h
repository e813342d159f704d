/*
 * relay_msg.h - reading the relay's NIP-01 messages without a JSON parser.
 *
 * Fan-out receives up to a million messages a second; parsing each with
 * cJSON would make the load generator the bottleneck.  relay_msg_scan()
 * reads only the head of a message: its type, its first string argument and,
 * for OK, the boolean and the message text; for EVENT it points at the event
 * object.  Strings are returned raw (escapes left as written), which is
 * exact for the hex ids and the sub ids bench/ uses.
 */
#ifndef BENCH_RELAY_MSG_H
#define BENCH_RELAY_MSG_H

#include <stdbool.h>
#include <stddef.h>

enum relay_msg_type {
	RMSG_OTHER,
	RMSG_OK,     /* ["OK", id, bool, message] */
	RMSG_EOSE,   /* ["EOSE", sub] */
	RMSG_EVENT,  /* ["EVENT", sub, {event}] */
	RMSG_CLOSED, /* ["CLOSED", sub, message] */
	RMSG_NOTICE, /* ["NOTICE", message] */
};

struct relay_msg {
	enum relay_msg_type type;
	const char *arg; /* OK: event id; EOSE/EVENT/CLOSED: sub id; NOTICE: text */
	size_t arg_len;
	bool accepted;    /* OK only */
	const char *text; /* OK/CLOSED: the message; EVENT: from '{' to the end */
	size_t text_len;
};

/*
 * Reads the head of one message (len bytes).  Returns 0 with *m filled, or
 * ERR_INVAL when it is not a JSON array starting with a string (m->type is
 * then RMSG_OTHER).  An unknown type is RMSG_OTHER with 0.
 */
int relay_msg_scan(const char *data, size_t len, struct relay_msg *m);

#endif
