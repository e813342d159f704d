/* nip98.c - NIP-98 authorization of NIP-86 requests (see nip98.h). */
#include "nip98.h"

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "auth.h"
#include "relayd.h"

/* The event inside "Nostr <base64>", parsed; NULL when not decodable. */
static cJSON *nip98_decode(const char *header)
{
	size_t len;
	unsigned char *json;
	int n;
	cJSON *obj;

	if (strncmp(header, "Nostr ", 6) != 0)
		return NULL;
	header += 6;
	len = strlen(header);
	if (len == 0 || len % 4 || len > 65536)
		return NULL;
	json = malloc(len / 4 * 3 + 1);
	if (!json)
		return NULL;
	n = EVP_DecodeBlock(json, (const unsigned char *)header, (int)len);
	while (n > 0 && json[n - 1] == '\0') /* base64 padding decodes to NULs */
		n--;
	obj = n > 0 ? json_parse((const char *)json, (size_t)n, false) : NULL;
	free(json);
	return obj;
}

static const char *nip98_tag(const cJSON *obj, const char *name)
{
	const cJSON *tag;

	cJSON_ArrayForEach(tag, cJSON_GetObjectItemCaseSensitive(obj, "tags")) {
		const cJSON *k = cJSON_GetArrayItem(tag, 0), *v = cJSON_GetArrayItem(tag, 1);

		if (cJSON_IsString(k) && !strcmp(k->valuestring, name) && cJSON_IsString(v))
			return v->valuestring;
	}
	return NULL;
}

/* The relay's URL with http(s) for ws(s), normalized like auth_url_key(). */
static int nip98_url_matches(const struct relayd *r, const char *u)
{
	char mine[CONFIG_TEXT_MAX], theirs[CONFIG_TEXT_MAX], http[CONFIG_TEXT_MAX + 2];

	auth_url_key(r->relay_url, mine, sizeof(mine));
	auth_url_key(u, theirs, sizeof(theirs));
	if (!strcmp(mine, theirs))
		return 1;
	if (!strncmp(mine, "ws", 2)) {
		snprintf(http, sizeof(http), "http%s", mine + 2);
		return !strcmp(http, theirs);
	}
	return 0;
}

static int nip98_is_admin(const struct relayd *r, const uint8_t pubkey[32])
{
	char hex[65];
	const char *list = relayd_cfg(r)->admin_pubkeys, *hit;

	hex_encode(pubkey, 32, hex);
	for (hit = strstr(list, hex); hit; hit = strstr(hit + 1, hex))
		if ((hit == list || hit[-1] == ',' || hit[-1] == ' ') &&
		    (hit[64] == '\0' || hit[64] == ',' || hit[64] == ' '))
			return 1;
	return 0;
}

static const char *nip98_check_event(const struct relayd *r, const cJSON *obj,
				     const struct event *ev, const char *body, size_t body_len)
{
	uint8_t digest[SHA256_DIGEST_LENGTH];
	char want[2 * SHA256_DIGEST_LENGTH + 1];
	const char *method = nip98_tag(obj, "method"), *u = nip98_tag(obj, "u");
	const char *payload = nip98_tag(obj, "payload");
	int64_t now = (int64_t)time(NULL);

	if (ev->kind != NIP98_KIND)
		return "the authorization event must be kind 27235";
	if (ev->created_at < now - NIP98_WINDOW || ev->created_at > now + NIP98_WINDOW)
		return "the authorization event is too old or too new";
	if (!method || strcmp(method, "POST"))
		return "the authorization must name method POST";
	if (!u || !nip98_url_matches(r, u))
		return "the authorization's u tag does not name this relay";
	SHA256((const unsigned char *)body, body_len, digest);
	hex_encode(digest, sizeof(digest), want);
	if (!payload || strcmp(payload, want))
		return "the authorization's payload tag is not the SHA-256 of the body";
	if (!nip98_is_admin(r, ev->pubkey))
		return "this pubkey is not an admin of the relay";
	return NULL;
}

const char *nip98_check(const struct relayd *r, struct sig_verifier *v, const char *header,
			const char *body, size_t body_len, uint8_t pubkey[32])
{
	cJSON *obj = header ? nip98_decode(header) : NULL;
	struct event ev;
	char reason[160];
	const char *why;

	if (!obj)
		return "missing or malformed Authorization: Nostr <base64 event>";
	if (event_parse(obj, NULL, &ev, reason, sizeof(reason))) {
		cJSON_Delete(obj);
		return "the authorization event is not a valid event";
	}
	why = sig_verify_event(v, &ev) ? "the authorization event's signature does not verify"
				       : nip98_check_event(r, obj, &ev, body, body_len);
	if (!why)
		memcpy(pubkey, ev.pubkey, 32);
	event_free(&ev);
	cJSON_Delete(obj);
	return why;
}
