/* auth.c - NIP-42 challenges, checks and per-lane state (see auth.h). */
#include "auth.h"

#include <ctype.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/err.h"
#include "../common/event.h"
#include "../common/hex.h"
#include "relayd.h"
#include "relayurl.h"

#define AUTH_BUCKETS 1024

struct auth_entry {
	struct auth_entry *next;
	uint64_t conn_id;
	uint32_t n;
	bool challenged; /* its challenge was sent by a lane (auth_first_challenge) */
	uint8_t pubkeys[AUTH_MAX_PUBKEYS][32];
	char *host; /* its Host header (owned), or NULL */
	char *peer; /* its client address (owned), or NULL: auth_note_peer() */
};

struct auth_table {
	/* A lane's two threads (fairq.h) use it, never for the same
	 * connection at once, and the service thread notes a Host before
	 * either sees the connection; the lock keeps the buckets whole. */
	pthread_mutex_t lock;
	struct auth_entry *bucket[AUTH_BUCKETS];
};

void auth_challenge(const struct relayd *r, uint64_t conn_id, char out[AUTH_CHALLENGE_HEX + 1])
{
	uint8_t input[sizeof(r->auth_secret) + 8], digest[SHA256_DIGEST_LENGTH];

	memcpy(input, r->auth_secret, sizeof(r->auth_secret));
	for (int i = 0; i < 8; i++)
		input[sizeof(r->auth_secret) + i] = (uint8_t)(conn_id >> (56 - 8 * i));
	SHA256(input, sizeof(input), digest);
	hex_encode(digest, AUTH_CHALLENGE_HEX / 2, out);
}

char *auth_challenge_frame(const struct relayd *r, uint64_t conn_id, size_t *len)
{
	char challenge[AUTH_CHALLENGE_HEX + 1], frame[AUTH_CHALLENGE_HEX + 16];

	auth_challenge(r, conn_id, challenge);
	*len = (size_t)snprintf(frame, sizeof(frame), "[\"AUTH\",\"%s\"]", challenge);
	return strdup(frame);
}

void auth_url_key(const char *url, char *out, size_t out_len)
{
	size_t n = 0;

	for (; *url && n + 1 < out_len; url++)
		out[n++] = (char)tolower((unsigned char)*url);
	while (n && out[n - 1] == '/')
		n--;
	out[n] = '\0';
}

/* The first value of the first tag named name, or NULL. */
static const char *auth_tag(const cJSON *obj, const char *name)
{
	const cJSON *tag;

	cJSON_ArrayForEach(tag, cJSON_GetObjectItemCaseSensitive(obj, "tags")) {
		const cJSON *key = cJSON_GetArrayItem(tag, 0), *value = cJSON_GetArrayItem(tag, 1);

		if (cJSON_IsString(key) && strcmp(key->valuestring, name) == 0 && cJSON_IsString(value))
			return value->valuestring;
	}
	return NULL;
}

static void auth_entry_free(struct auth_entry *e)
{
	if (e) {
		free(e->host);
		free(e->peer);
	}
	free(e);
}

struct auth_table *auth_table_new(void)
{
	struct auth_table *t = calloc(1, sizeof(*t));

	if (t)
		pthread_mutex_init(&t->lock, NULL);
	return t;
}

void auth_table_free(struct auth_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < AUTH_BUCKETS; i++) {
		struct auth_entry *e = t->bucket[i], *next;

		for (; e; e = next) {
			next = e->next;
			auth_entry_free(e);
		}
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static struct auth_entry **auth_slot(struct auth_table *t, uint64_t conn_id)
{
	struct auth_entry **p = &t->bucket[(conn_id ^ conn_id >> 32) % AUTH_BUCKETS];

	while (*p && (*p)->conn_id != conn_id)
		p = &(*p)->next;
	return p;
}

static const struct auth_entry *auth_find(const struct auth_table *t, uint64_t conn_id)
{
	return *auth_slot((struct auth_table *)t, conn_id);
}

/* Whether e holds pubkey (e may be NULL).  Caller holds the lock. */
static bool auth_entry_has(const struct auth_entry *e, const uint8_t pubkey[32])
{
	for (uint32_t i = 0; e && i < e->n; i++)
		if (memcmp(e->pubkeys[i], pubkey, 32) == 0)
			return true;
	return false;
}

static void auth_lock(const struct auth_table *t)
{
	pthread_mutex_lock(&((struct auth_table *)t)->lock);
}

static void auth_unlock(const struct auth_table *t)
{
	pthread_mutex_unlock(&((struct auth_table *)t)->lock);
}

static bool auth_entry_names_host(const struct auth_entry *e, const char *relay)
{
	return e && e->host && relayurl_names_host(relay, e->host);
}

/* NIP-42: the relay tag names relay_url, else the host the client dialled
 * (its Host header) or the URL of the bind. */
static bool auth_relay_ok(const struct relayd *r, const struct auth_table *t, uint64_t conn_id,
			  const char *relay)
{
	bool named;

	if (relayd_cfg(r)->relay_url[0])
		return relayurl_same(relay, relayd_cfg(r)->relay_url);
	if (relayurl_same(relay, r->relay_url))
		return true;
	auth_lock(t);
	named = auth_entry_names_host(auth_find(t, conn_id), relay);
	auth_unlock(t);
	return named;
}

const char *auth_check(const struct relayd *r, const struct auth_table *t, uint64_t conn_id,
		       const struct event *ev, const cJSON *obj)
{
	char want[AUTH_CHALLENGE_HEX + 1];
	const char *challenge = auth_tag(obj, "challenge"), *relay = auth_tag(obj, "relay");
	int64_t now = (int64_t)time(NULL);

	if (ev->kind != AUTH_KIND)
		return "invalid: AUTH needs a kind 22242 event";
	if (ev->created_at < now - AUTH_WINDOW || ev->created_at > now + AUTH_WINDOW)
		return "invalid: the AUTH event's created_at is too far from now";
	auth_challenge(r, conn_id, want);
	if (!challenge || strcmp(challenge, want) != 0)
		return "invalid: the challenge does not match this connection's";
	if (!auth_relay_ok(r, t, conn_id, relay))
		return "invalid: the relay tag does not name this relay";
	return NULL;
}

/* conn_id's entry, made if it has none; NULL without memory.  Caller holds
 * the lock. */
static struct auth_entry *auth_entry_get(struct auth_table *t, uint64_t conn_id)
{
	struct auth_entry **p = auth_slot(t, conn_id);

	if (!*p) {
		*p = calloc(1, sizeof(**p));
		if (*p)
			(*p)->conn_id = conn_id;
	}
	return *p;
}

int auth_add(struct auth_table *t, uint64_t conn_id, const uint8_t pubkey[32])
{
	struct auth_entry *e;
	int rc = 0;

	auth_lock(t);
	e = auth_entry_get(t, conn_id);
	if (!e)
		rc = ERR_NOMEM;
	else if (auth_entry_has(e, pubkey))
		rc = 0;
	else if (e->n == AUTH_MAX_PUBKEYS)
		rc = ERR_FULL;
	else
		memcpy(e->pubkeys[e->n++], pubkey, 32);
	auth_unlock(t);
	return rc;
}

/* Puts copy (owned, or NULL: no memory) in the string field at offset of
 * conn_id's entry, freeing the one it held.  Returns 0 or ERR_NOMEM. */
static int auth_note_string(struct auth_table *t, uint64_t conn_id, size_t offset, char *copy)
{
	struct auth_entry *e;

	if (!copy)
		return ERR_NOMEM;
	auth_lock(t);
	e = auth_entry_get(t, conn_id);
	if (e) {
		char **field = (char **)((char *)e + offset);

		free(*field);
		*field = copy;
		copy = NULL;
	}
	auth_unlock(t);
	free(copy);
	return e ? 0 : ERR_NOMEM;
}

int auth_note_host(struct auth_table *t, uint64_t conn_id, const char *host)
{
	return auth_note_string(t, conn_id, offsetof(struct auth_entry, host),
				strndup(host, AUTH_HOST_MAX - 1));
}

int auth_note_peer(struct auth_table *t, uint64_t conn_id, const char *ip)
{
	return auth_note_string(t, conn_id, offsetof(struct auth_entry, peer), strdup(ip));
}

size_t auth_peer(struct auth_table *t, uint64_t conn_id, char *out, size_t out_len)
{
	const struct auth_entry *e;
	size_t n = 0;

	auth_lock(t);
	e = auth_find(t, conn_id);
	if (e && e->peer && out_len) {
		n = strnlen(e->peer, out_len - 1);
		memcpy(out, e->peer, n);
	}
	auth_unlock(t);
	if (out_len)
		out[n] = '\0';
	return n;
}

bool auth_first_challenge(struct auth_table *t, uint64_t conn_id)
{
	struct auth_entry *e;
	bool first;

	auth_lock(t);
	e = auth_entry_get(t, conn_id);
	first = !e || !e->challenged; /* without memory it may come twice */
	if (e)
		e->challenged = true;
	auth_unlock(t);
	return first;
}

bool auth_has(const struct auth_table *t, uint64_t conn_id, const uint8_t pubkey[32])
{
	bool has;

	auth_lock(t);
	has = auth_entry_has(auth_find(t, conn_id), pubkey);
	auth_unlock(t);
	return has;
}

bool auth_any(const struct auth_table *t, uint64_t conn_id)
{
	const struct auth_entry *e;
	bool any;

	auth_lock(t);
	e = auth_find(t, conn_id);
	any = e && e->n > 0;
	auth_unlock(t);
	return any;
}

uint32_t auth_list(const struct auth_table *t, uint64_t conn_id,
		   uint8_t out[AUTH_MAX_PUBKEYS][32])
{
	const struct auth_entry *e;
	uint32_t n = 0;

	auth_lock(t);
	e = auth_find(t, conn_id);
	if (e) {
		memcpy(out, e->pubkeys, (size_t)e->n * 32);
		n = e->n;
	}
	auth_unlock(t);
	return n;
}

void auth_forget(struct auth_table *t, uint64_t conn_id)
{
	struct auth_entry **p, *e;

	auth_lock(t);
	p = auth_slot(t, conn_id);
	e = *p;
	if (e)
		*p = e->next;
	auth_unlock(t);
	auth_entry_free(e);
}
