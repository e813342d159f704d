/* ws_deflate.c - per-message deflate for the load generator (see ws_deflate.h). */
#include "ws_deflate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <zlib.h>

#include "buf.h"
#include "err.h"

struct ws_zstreams {
	z_stream d, i;
	bool d_ok, i_ok;
};

static const uint8_t ws_z_tail[4] = { 0, 0, 0xff, 0xff };

struct ws_zstreams *ws_z_new(void)
{
	struct ws_zstreams *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->d_ok = deflateInit2(&z->d, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	z->i_ok = inflateInit2(&z->i, -15) == Z_OK;
	if (!z->d_ok || !z->i_ok) {
		ws_z_free(z);
		return NULL;
	}
	return z;
}

void ws_z_free(struct ws_zstreams *z)
{
	if (!z)
		return;
	if (z->d_ok)
		deflateEnd(&z->d);
	if (z->i_ok)
		inflateEnd(&z->i);
	free(z);
}

int ws_z_deflate(struct ws_zstreams *z, const struct iovec *iov, int iovcnt, struct buf *out)
{
	size_t total = 0;

	for (int k = 0; k < iovcnt; k++)
		total += iov[k].iov_len;
	buf_reset(out);
	if (deflateReset(&z->d) != Z_OK || buf_reserve(out, deflateBound(&z->d, total) + 16))
		return ERR_NOMEM;
	z->d.next_out = (Bytef *)out->data;
	z->d.avail_out = (uInt)(out->cap - 1);
	for (int k = 0; k < iovcnt; k++) {
		z->d.next_in = iov[k].iov_base;
		z->d.avail_in = (uInt)iov[k].iov_len;
		if (deflate(&z->d, k == iovcnt - 1 ? Z_SYNC_FLUSH : Z_NO_FLUSH) == Z_STREAM_ERROR ||
		    z->d.avail_in)
			return ERR_INVAL;
	}
	if (iovcnt == 0 && deflate(&z->d, Z_SYNC_FLUSH) == Z_STREAM_ERROR)
		return ERR_INVAL;
	out->len = (size_t)((char *)z->d.next_out - out->data) - sizeof(ws_z_tail);
	return 0;
}

/* Inflates what z->i holds into out, growing it up to max + 1 bytes. */
static int ws_z_run(struct ws_zstreams *z, size_t max, struct buf *out)
{
	while (z->i.avail_in) {
		int rc;

		if (out->cap - 1 - out->len == 0) {
			if (out->len > max)
				return ERR_TOOBIG;
			if (buf_reserve(out, out->len < 65536 ? 65536 : out->len))
				return ERR_NOMEM;
		}
		z->i.next_out = (Bytef *)out->data + out->len;
		z->i.avail_out = (uInt)(out->cap - 1 - out->len);
		rc = inflate(&z->i, Z_SYNC_FLUSH);
		out->len = (size_t)((char *)z->i.next_out - out->data);
		if (rc == Z_STREAM_END)
			return 0;
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return ERR_INVAL;
		if (out->len > max)
			return ERR_TOOBIG;
	}
	return 0;
}

int ws_z_inflate(struct ws_zstreams *z, const uint8_t *in, size_t len, size_t max, struct buf *out)
{
	int rc;

	buf_reset(out);
	if (inflateReset(&z->i) != Z_OK)
		return ERR_INVAL;
	z->i.next_in = (Bytef *)in;
	z->i.avail_in = (uInt)len;
	rc = ws_z_run(z, max, out);
	if (!rc) {
		z->i.next_in = (Bytef *)ws_z_tail;
		z->i.avail_in = sizeof(ws_z_tail);
		rc = ws_z_run(z, max, out);
	}
	if (!rc && out->data)
		out->data[out->len] = '\0';
	return rc;
}
