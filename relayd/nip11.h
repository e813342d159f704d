/*
 * nip11.h - the NIP-11 relay information document.
 *
 * The document is built once from the config and served by http.c to a
 * GET with `Accept: application/nostr+json`.  supported_nips lists only
 * what works with the current configuration.
 */
#ifndef RELAYD_NIP11_H
#define RELAYD_NIP11_H

#include <stddef.h>

struct relayd;

/* Builds r->nip11 from r->cfg.  Returns 0 or ERR_TOOBIG. */
int nip11_build(struct relayd *r);

#endif
