/*
 * fuzz_client_msg.c - libFuzzer target for what a client can send: the
 * bytes go through json_parse() exactly as an ingress lane parses them, then the
 * element that would be an event through event_parse() and every element
 * that would be a filter through filter_parse().  Anything may be refused;
 * nothing may crash, leak or read out of bounds.  A parsed event must have
 * canonical JSON that json_parse() accepts and that parses back to the same
 * id.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../common/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_event(const cJSON *obj)
{
	struct event_limits lim = { 50, 4096, 4096, 1700000000, 0, 0 };
	struct event ev, again;
	char reason[160];
	cJSON *back;

	if (event_parse(obj, &lim, &ev, reason, sizeof(reason)))
		return;
	back = json_parse(ev.json, ev.json_len, true);
	if (!back || event_parse(back, &lim, &again, reason, sizeof(reason)))
		abort(); /* the relay's own output must be valid and parse the same */
	if (memcmp(ev.id, again.id, sizeof(ev.id)) != 0 || strcmp(ev.json, again.json) != 0)
		abort();
	event_free(&again);
	cJSON_Delete(back);
	event_free(&ev);
}

static void fuzz_filter(const cJSON *obj)
{
	struct filter_limits lim = { 100, 500 };
	struct filter f, copy;
	char reason[160];

	if (filter_parse(obj, &lim, &f, reason, sizeof(reason)))
		return;
	if (filter_copy(&copy, &f) == 0)
		filter_free(&copy);
	filter_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *msg = json_parse((const char *)data, size, true);
	const cJSON *item;

	if (!msg)
		return 0;
	cJSON_ArrayForEach(item, msg) {
		if (cJSON_IsObject(item)) {
			fuzz_event(item);
			fuzz_filter(item);
		}
	}
	if (cJSON_IsObject(msg)) {
		fuzz_event(msg);
		fuzz_filter(msg);
	}
	cJSON_Delete(msg);
	return 0;
}
