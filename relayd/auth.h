/*
 * auth.h - NIP-42 authentication, owned by the ingress lanes.
 *
 * The challenge a connection gets is derived from a per-process secret and
 * its conn_id (SHA-256, 128 bits shown as hex), so the service thread that
 * sends it and the lane that checks the answer agree without sharing state.
 * Which pubkeys a connection authenticated as lives in its lane's table:
 * a connection always uses the same lane, so a table is shared only by
 * that lane's two threads (fairq.h), which never handle one connection at
 * once; its lock is taken by each call and never contended for long.  A
 * connection may authenticate several pubkeys (up to AUTH_MAX_PUBKEYS).
 * The service thread also notes a new connection's Host header there
 * (auth_note_host()), before its lane sees any of its messages.
 */
#ifndef RELAYD_AUTH_H
#define RELAYD_AUTH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_CHALLENGE_HEX 32
#define AUTH_MAX_PUBKEYS 8
#define AUTH_KIND 22242
/* How far an AUTH event's created_at may be from now, in seconds. */
#define AUTH_WINDOW 600
/* The longest Host header kept for a connection, with its NUL. */
#define AUTH_HOST_MAX 256

struct relayd;
struct event;
struct auth_table;

/* Writes the challenge for conn_id (AUTH_CHALLENGE_HEX chars and a NUL). */
void auth_challenge(const struct relayd *r, uint64_t conn_id, char out[AUTH_CHALLENGE_HEX + 1]);
/* The frame ["AUTH","<challenge>"] for conn_id, malloc'ed, its length in
 * *len; NULL without memory. */
char *auth_challenge_frame(const struct relayd *r, uint64_t conn_id, size_t *len);

/*
 * Checks a parsed, signature-verified kind 22242 event sent with AUTH on
 * conn_id: kind, created_at within AUTH_WINDOW, a `relay` tag naming this
 * relay and a `challenge` tag equal to the connection's.  The relay tag must
 * name relay_url when it is set (relayurl_same()); else the URL of the bind,
 * or the host in the Host header noted for conn_id in t (auth_note_host()).
 * obj is the event's JSON (for the multi-letter tags).  Returns NULL if it
 * is good, else a static "invalid: ..." reason.
 */
const char *auth_check(const struct relayd *r, const struct auth_table *t, uint64_t conn_id,
		       const struct event *ev, const cJSON *obj);

/* A lane's table of authenticated connections (thread-safe).  NULL without
 * memory. */
struct auth_table *auth_table_new(void);
/* Frees t and what it records.  NULL-safe. */
void auth_table_free(struct auth_table *t);
/* Records that conn_id proved pubkey.  Returns 0, or ERR_FULL past
 * AUTH_MAX_PUBKEYS, or ERR_NOMEM. */
int auth_add(struct auth_table *t, uint64_t conn_id, const uint8_t pubkey[32]);
/* Notes the Host header conn_id's handshake carried (cut to
 * AUTH_HOST_MAX - 1 bytes), which auth_check() accepts in a relay tag
 * while relay_url is unset.  Returns 0 or ERR_NOMEM. */
int auth_note_host(struct auth_table *t, uint64_t conn_id, const char *host);
/* Notes the client's address (relayd/realip.h) of conn_id, which its
 * EVENTs carry to stored's write-policy plugin.  Returns 0 or ERR_NOMEM. */
int auth_note_peer(struct auth_table *t, uint64_t conn_id, const char *ip);
/* Copies the address noted for conn_id into out (out_len bytes, NUL
 * included; "" when none was noted) and returns its length. */
size_t auth_peer(struct auth_table *t, uint64_t conn_id, char *out, size_t out_len);
/* True the first time it is called for conn_id (until auth_forget()), so
 * a lane sends a connection its challenge once, when it first needs it. */
bool auth_first_challenge(struct auth_table *t, uint64_t conn_id);
/* Whether conn_id authenticated as pubkey / as anyone. */
bool auth_has(const struct auth_table *t, uint64_t conn_id, const uint8_t pubkey[32]);
bool auth_any(const struct auth_table *t, uint64_t conn_id);
/* Copies the pubkeys conn_id authenticated as into out (at most
 * AUTH_MAX_PUBKEYS); returns how many. */
uint32_t auth_list(const struct auth_table *t, uint64_t conn_id,
		   uint8_t out[AUTH_MAX_PUBKEYS][32]);
/* Drops what conn_id proved (it closed). */
void auth_forget(struct auth_table *t, uint64_t conn_id);

/* Lowercase without trailing slashes, for comparing relay URLs. */
void auth_url_key(const char *url, char *out, size_t out_len);

#endif
