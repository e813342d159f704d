/*
 * nip11.h - the NIP-11 relay information document.
 *
 * The document is built at start, on reload, and when stored's NIP-86
 * policy changes its texts.  http.c serves it to a GET with
 * `Accept: application/nostr+json`.  supported_nips lists only what works
 * with the current configuration.
 */
#ifndef RELAYD_NIP11_H
#define RELAYD_NIP11_H

#include <stddef.h>

struct relayd;

/* Builds r->nip11 and r->nip11_len from the configuration and r->policy.
 * Returns 0, or ERR_TOOBIG (r->nip11 unchanged) when it does not fit. */
int nip11_build(struct relayd *r);

#endif
