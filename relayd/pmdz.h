/*
 * pmdz.h - one websocket message at a time through zlib (RFC 7692 7.2).
 *
 * relayd negotiates no context takeover in either direction, so each
 * message is deflated or inflated on its own: one deflate stream and one
 * inflate stream serve every connection of the service thread, reset
 * before each message.  A connection keeps no zlib state at all.
 *
 * A compressed message is a run of deflate blocks whose last four bytes
 * (00 00 ff ff, the empty stored block of a sync flush) are left off.
 * Independently compressed pieces can be concatenated, since none refers
 * back into another: relayd sends a live event to a subscription as a
 * stored block holding its prefix `["EVENT","<subid>",` followed by the
 * event and `]`, deflated once for every recipient (send.c).
 *
 * Threading: one struct pmdz per thread.
 */
#ifndef RELAYD_PMDZ_H
#define RELAYD_PMDZ_H

#include <stddef.h>

struct pmdz;

/* A deflater at zlib level (1-9) and an inflater; NULL without memory. */
struct pmdz *pmdz_new(int level);
/* Frees it.  NULL-safe. */
void pmdz_free(struct pmdz *z);

/*
 * Compresses a (alen bytes) followed by b (blen bytes, b may be NULL when
 * blen is 0) as one message's blocks into out, which holds cap bytes.
 * Returns 0 with the size in *out_len, or ERR_FULL when the result needs
 * more than cap - 5 bytes (then sending it as it is costs less), or
 * ERR_INVAL if zlib fails.
 */
int pmdz_compress(struct pmdz *z, const void *a, size_t alen, const void *b, size_t blen,
		  unsigned char *out, size_t cap, size_t *out_len);

/*
 * Inflates the compressed message in (len bytes) into out, which holds
 * max + 1 bytes.  Returns 0 with the size in *out_len; ERR_TOOBIG as soon
 * as the output passes max bytes (the rest is not inflated); ERR_INVAL when
 * in is not valid deflate data.
 */
int pmdz_inflate(struct pmdz *z, const unsigned char *in, size_t len, unsigned char *out,
		 size_t max, size_t *out_len);

/* The most bytes one stored block holds. */
#define PMDZ_STORED_MAX 65535
/* Size of a stored block's header. */
#define PMDZ_STORED_HEAD 5

/* Writes to h the header of a non-final stored block of len bytes
 * (len <= PMDZ_STORED_MAX, RFC 1951 3.2.4): the block's bytes follow it
 * uncompressed. */
void pmdz_stored_header(unsigned char h[PMDZ_STORED_HEAD], size_t len);

#endif
