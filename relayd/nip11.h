/*
 * nip11.h - the NIP-11 relay information document and plain HTTP on the
 * relay's port.
 *
 * The document is built once from the config (nip11_build) and served to a
 * GET with `Accept: application/nostr+json`, with the CORS headers NIP-11
 * asks for; an OPTIONS preflight gets the same headers and no body.  Other
 * GETs get a short text page.  supported_nips lists only what works.
 */
#ifndef RELAYD_NIP11_H
#define RELAYD_NIP11_H

#include <libwebsockets.h>
#include <stddef.h>

struct relayd;

/* Per-HTTP-transaction state kept in the lws session. */
struct nip11_session {
	const char *body;
	size_t body_len;
};

/* Builds r->nip11 from r->cfg.  Returns 0 or ERR_TOOBIG. */
int nip11_build(struct relayd *r);
/* LWS_CALLBACK_HTTP: writes the headers and asks to write the body. */
int nip11_on_http(struct relayd *r, struct lws *wsi, struct nip11_session *s);
/* LWS_CALLBACK_HTTP_WRITEABLE: writes the body and ends the transaction. */
int nip11_on_writable(struct lws *wsi, struct nip11_session *s);

#endif
