/*
 * nip86.h - the NIP-86 relay management API, on a worker's HTTP side.
 *
 * A POST with Content-Type application/nostr+json+rpc carries a JSON-RPC
 * request.  The worker collects the body (at most NIP86_MAX_BODY bytes),
 * checks the NIP-98 authorization (nip98.h) and hands the request to stored,
 * which owns the state (bans, allow lists, relay texts) and answers it; the
 * answer goes back on the same HTTP connection.  Refusals: 401 for a bad or
 * missing authorization, 415 for another content type, 404 when no admin is
 * configured, 503 when stored is unreachable, 504 when it does not answer
 * within NIP86_TIMEOUT_MS.
 */
#ifndef RELAYD_NIP86_H
#define RELAYD_NIP86_H

#include <libwebsockets.h>
#include <stddef.h>
#include <stdint.h>

#define NIP86_MAX_BODY 65536
#define NIP86_TIMEOUT_MS 10000
#define NIP86_MAX_PENDING 32

struct relayd;
struct http_session;
struct nip86;

/* The NIP-86 state of a worker (r->nip86), or NULL without memory. */
struct nip86 *nip86_new(void);
/* Frees it; requests still waiting are dropped unanswered.  NULL-safe. */
void nip86_free(struct nip86 *n);

/* The headers of a POST arrived on wsi: notes in s whether to refuse it
 * once its body is in (the answer comes only then).  Returns 0. */
int nip86_on_request(struct relayd *r, struct lws *wsi, struct http_session *s);
/* Appends len bytes of the body to s; past NIP86_MAX_BODY they are
 * dropped and the request is refused when complete. */
void nip86_on_body(struct http_session *s, const void *in, size_t len);
/* The body is complete: refuses the request, or checks its NIP-98
 * authorization and forwards it to stored.  The answer comes later through
 * http_session_respond().  Returns 0. */
int nip86_on_body_done(struct relayd *r, struct lws *wsi, struct http_session *s);
/* stored answered request_id with response (len bytes of JSON, copied).
 * An answer no request waits for any more is dropped. */
void nip86_on_result(struct relayd *r, uint32_t request_id, const char *response, size_t len);
/* The HTTP transaction of s ended: its answer, if one comes, is dropped. */
void nip86_forget(struct relayd *r, struct http_session *s);
/* Answers 504 to the requests waiting since NIP86_TIMEOUT_MS before now_ms
 * (service_tick). */
void nip86_expire(struct relayd *r, int64_t now_ms);

#endif
