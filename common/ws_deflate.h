/*
 * ws_deflate.h - permessage-deflate (RFC 7692) for the load generator's
 * client connections: one deflater and one inflater per loop, reset for
 * every message (the client offers, and the relay answers with, no context
 * takeover either way, so a message never refers to an earlier one).
 *
 * A loop offers deflate once ws_loop_offer_deflate() was called; each
 * connection whose handshake accepted it sends every text message
 * compressed (RSV1) and inflates every compressed message it receives.
 */
#ifndef COMMON_WS_DEFLATE_H
#define COMMON_WS_DEFLATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct buf;
struct ws_zstreams;

/* A deflater (level 6) and an inflater; NULL without memory. */
struct ws_zstreams *ws_z_new(void);
/* NULL-safe. */
void ws_z_free(struct ws_zstreams *z);

/* Replaces out's contents with the iovcnt pieces compressed as one message
 * (the sync flush's last four bytes left off).  Returns 0, ERR_NOMEM or
 * ERR_INVAL. */
int ws_z_deflate(struct ws_zstreams *z, const struct iovec *iov, int iovcnt, struct buf *out);

/* Replaces out's contents with the message in (len bytes) inflated, at
 * most max bytes.  Returns 0, ERR_TOOBIG, ERR_INVAL or ERR_NOMEM. */
int ws_z_inflate(struct ws_zstreams *z, const uint8_t *in, size_t len, size_t max, struct buf *out);

#endif
