/* private.c - kinds readable only by their parties (see private.h). */
#include "private.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../common/config.h"
#include "../common/filter.h"
#include "../common/hex.h"
#include "../common/json.h"

bool private_kind(const struct config *cfg, uint32_t kind)
{
	/* A kind and a comma each: no list that fits the key holds more. */
	uint32_t kinds[CONFIG_TEXT_MAX / 2];
	size_t n = config_kinds(cfg->private_kinds, kinds, CONFIG_TEXT_MAX / 2);

	for (size_t i = 0; i < n && i < CONFIG_TEXT_MAX / 2; i++)
		if (kinds[i] == kind)
			return true;
	return false;
}

bool private_filter_reaches(const struct config *cfg, const struct filter *f)
{
	if (!cfg->private_kinds[0])
		return false;
	if (!f->has_kinds)
		return true;
	for (uint32_t i = 0; i < f->nkinds; i++)
		if (private_kind(cfg, f->kinds[i]))
			return true;
	return false;
}

bool private_filter_only(const struct config *cfg, const struct filter *f)
{
	if (!cfg->private_kinds[0] || !f->has_kinds || f->nkinds == 0)
		return false;
	for (uint32_t i = 0; i < f->nkinds; i++)
		if (!private_kind(cfg, f->kinds[i]))
			return false;
	return true;
}

static bool private_is_viewer(const uint8_t (*viewers)[32], uint32_t n, const char *hex)
{
	uint8_t key[32];

	if (!hex || strlen(hex) != 64 || hex_decode(hex, 64, key, 32))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(viewers[i], key, 32) == 0)
			return true;
	return false;
}

/* The kind, read from the canonical layout
 * {"id":"<64>","pubkey":"<64>","created_at":N,"kind":N,... }. */
static long private_kind_of(const char *json, size_t len)
{
	const char *k = memmem(json, len < 200 ? len : 200, "\"kind\":", 7);

	return k ? strtol(k + 7, NULL, 10) : -1;
}

bool private_visible(const struct config *cfg, const char *json, size_t len,
		     const uint8_t (*viewers)[32], uint32_t n)
{
	long kind = private_kind_of(json, len);
	cJSON *ev, *tag;
	bool ok;

	if (kind < 0 || !private_kind(cfg, (uint32_t)kind))
		return true;
	if (n == 0)
		return false;
	ev = json_parse(json, len, false);
	ok = private_is_viewer(viewers, n, cJSON_GetStringValue(cJSON_GetObjectItem(ev, "pubkey")));
	cJSON_ArrayForEach(tag, cJSON_GetObjectItem(ev, "tags")) {
		const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(tag, 0));

		if (!ok && name && !strcmp(name, "p"))
			ok = private_is_viewer(viewers, n, cJSON_GetStringValue(cJSON_GetArrayItem(tag, 1)));
	}
	cJSON_Delete(ev);
	return ok;
}

/* The viewer arrays in struct mail and struct sub hold AUTH_MAX_PUBKEYS. */
#include "auth.h"
#include "conn.h"
#include "mailbox.h"
_Static_assert(sizeof(((struct mail *)0)->viewers) / 32 == AUTH_MAX_PUBKEYS, "mail viewers");
_Static_assert(sizeof(((struct sub *)0)->viewers) / 32 == AUTH_MAX_PUBKEYS, "sub viewers");
