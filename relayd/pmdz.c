/* pmdz.c - per-message deflate and inflate with zlib (see pmdz.h). */
#include "pmdz.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../common/err.h"

struct pmdz {
	z_stream out;
	z_stream in;
	bool out_ok, in_ok;
};

/* The empty stored block a sync flush ends with (RFC 7692 7.2.1). */
static const unsigned char pmdz_tail[4] = { 0x00, 0x00, 0xff, 0xff };

struct pmdz *pmdz_new(int level)
{
	struct pmdz *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	/* Negative window bits: raw deflate, no zlib header or checksum. */
	z->out_ok = deflateInit2(&z->out, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	z->in_ok = inflateInit2(&z->in, -15) == Z_OK;
	if (!z->out_ok || !z->in_ok) {
		pmdz_free(z);
		return NULL;
	}
	return z;
}

void pmdz_free(struct pmdz *z)
{
	if (!z)
		return;
	if (z->out_ok)
		deflateEnd(&z->out);
	if (z->in_ok)
		inflateEnd(&z->in);
	free(z);
}

/* Feeds len bytes at p to the deflater with flush; false if zlib fails
 * or out filled up. */
static bool pmdz_feed(z_stream *s, const void *p, size_t len, int flush)
{
	s->next_in = (Bytef *)(uintptr_t)p;
	s->avail_in = (uInt)len;
	if (deflate(s, flush) == Z_STREAM_ERROR)
		return false;
	return s->avail_in == 0 && s->avail_out > 0;
}

int pmdz_compress(struct pmdz *z, const void *a, size_t alen, const void *b, size_t blen,
		  unsigned char *out, size_t cap, size_t *out_len)
{
	z_stream *s = &z->out;

	if (cap <= 5 || alen > UINT32_MAX || blen > UINT32_MAX || cap > UINT32_MAX)
		return ERR_FULL;
	if (deflateReset(s) != Z_OK)
		return ERR_INVAL;
	s->next_out = out;
	s->avail_out = (uInt)cap;
	if (!pmdz_feed(s, a, alen, Z_NO_FLUSH) || !pmdz_feed(s, b, blen, Z_SYNC_FLUSH))
		return ERR_FULL;
	/* avail_out > 0 after a sync flush: the flush is complete. */
	*out_len = cap - s->avail_out - sizeof(pmdz_tail);
	return 0;
}

/* One inflate() over what s holds; returns 0 while it may go on, 1 at the
 * end of the deflate stream, or an error. */
static int pmdz_step(z_stream *s)
{
	int rc = inflate(s, Z_SYNC_FLUSH);

	if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR || rc == Z_MEM_ERROR)
		return ERR_INVAL;
	if (s->avail_out == 0)
		return ERR_TOOBIG;
	return rc == Z_STREAM_END ? 1 : 0;
}

int pmdz_inflate(struct pmdz *z, const unsigned char *in, size_t len, unsigned char *out,
		 size_t max, size_t *out_len)
{
	z_stream *s = &z->in;
	int rc;

	if (len > UINT32_MAX || max >= UINT32_MAX)
		return ERR_TOOBIG;
	if (inflateReset(s) != Z_OK)
		return ERR_INVAL;
	s->next_out = out;
	s->avail_out = (uInt)max + 1; /* one byte more: filling it means over max */
	s->next_in = (Bytef *)(uintptr_t)in;
	s->avail_in = (uInt)len;
	while ((rc = pmdz_step(s)) == 0 && s->avail_in)
		;
	if (rc == 0) {
		s->next_in = (Bytef *)(uintptr_t)pmdz_tail;
		s->avail_in = sizeof(pmdz_tail);
		while ((rc = pmdz_step(s)) == 0 && s->avail_in)
			;
	}
	if (rc < 0)
		return rc;
	*out_len = (size_t)(s->next_out - out);
	return 0;
}

void pmdz_stored_header(unsigned char h[PMDZ_STORED_HEAD], size_t len)
{
	h[0] = 0x00; /* BFINAL 0, BTYPE 00, then padding to the byte */
	h[1] = (unsigned char)len;
	h[2] = (unsigned char)(len >> 8);
	h[3] = (unsigned char)~len;
	h[4] = (unsigned char)(~len >> 8);
}
