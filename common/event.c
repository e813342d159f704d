/*
 * event.c - struct event: construction, classification and ordering.
 * Parsing client JSON lives in event_parse.c; signatures in event_sig.c.
 */
#include "event.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

void event_free(struct event *ev)
{
	if (!ev)
		return;
	free(ev->storage);
	free(ev->content);
	memset(ev, 0, sizeof(*ev));
}

int event_set_content(struct event *ev, const char *content, uint32_t len)
{
	char *copy = malloc((size_t)len + 1);

	if (!copy)
		return ERR_NOMEM;
	memcpy(copy, content, len);
	copy[len] = '\0';
	free(ev->content);
	ev->content = copy;
	ev->content_len = len;
	return 0;
}

enum event_class event_class_of(uint32_t kind)
{
	if (kind == 0 || kind == 3 || (kind >= 10000 && kind < 20000))
		return EVENT_REPLACEABLE;
	if (kind >= 20000 && kind < 30000)
		return EVENT_EPHEMERAL;
	if (kind >= 30000 && kind < 40000)
		return EVENT_ADDRESSABLE;
	return EVENT_REGULAR;
}

const char *event_tag_value(const struct event *ev, char name, uint32_t *len)
{
	for (uint32_t i = 0; i < ev->ntags; i++) {
		if (ev->tags[i].name == name) {
			*len = ev->tags[i].value_len;
			return ev->tags[i].value;
		}
	}
	*len = 0;
	return NULL;
}

bool event_newer(int64_t a_created, const uint8_t *a_id, int64_t b_created, const uint8_t *b_id)
{
	if (a_created != b_created)
		return a_created > b_created;
	return memcmp(a_id, b_id, EVENT_ID_LEN) < 0;
}

/*
 * One allocation holds the tag array, then the JSON, then the tag values, so
 * event_free() is a single free().
 */
int event_build(struct event *out, const uint8_t id[EVENT_ID_LEN],
		const uint8_t pubkey[EVENT_PUBKEY_LEN], const uint8_t sig[EVENT_SIG_LEN],
		int64_t created_at, uint32_t kind, const struct event_tag *tags, uint32_t ntags,
		const char *json, uint32_t json_len)
{
	size_t size = (size_t)ntags * sizeof(struct event_tag) + json_len + 1;
	char *cursor;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < ntags; i++)
		size += tags[i].value_len + 1;
	out->storage = malloc(size);
	if (!out->storage)
		return ERR_NOMEM;
	memcpy(out->id, id, EVENT_ID_LEN);
	memcpy(out->pubkey, pubkey, EVENT_PUBKEY_LEN);
	memcpy(out->sig, sig, EVENT_SIG_LEN);
	out->created_at = created_at;
	out->kind = kind;
	out->tags = out->storage;
	out->ntags = ntags;
	cursor = (char *)out->storage + (size_t)ntags * sizeof(struct event_tag);
	out->json = cursor;
	out->json_len = json_len;
	memcpy(cursor, json, json_len);
	cursor[json_len] = '\0';
	cursor += json_len + 1;
	for (uint32_t i = 0; i < ntags; i++) {
		out->tags[i].name = tags[i].name;
		out->tags[i].value_len = tags[i].value_len;
		out->tags[i].value = cursor;
		memcpy(cursor, tags[i].value, tags[i].value_len);
		cursor[tags[i].value_len] = '\0';
		cursor += tags[i].value_len + 1;
	}
	if (ntags == 0)
		out->tags = NULL;
	return 0;
}
