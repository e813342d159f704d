/*
 * wire.c - big-endian integers, raw bytes and length-prefixed strings (see
 * wire.h).  Writers append to a struct buf and never leave half a value
 * behind; the reader is a bounds-checked cursor whose first error sticks:
 * once it has failed, every read returns zero and nothing remains.
 */
#include "wire.h"

#include <string.h>

#include "../common/err.h"

/* Writes the low n bytes of v, most significant first. */
static int wire_put_be(struct buf *b, uint64_t v, size_t n)
{
	uint8_t bytes[8];

	for (size_t i = 0; i < n; i++)
		bytes[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return buf_append(b, bytes, n);
}

int wire_put_u8(struct buf *b, uint8_t v)
{
	return wire_put_be(b, v, 1);
}

int wire_put_u16(struct buf *b, uint16_t v)
{
	return wire_put_be(b, v, 2);
}

int wire_put_u32(struct buf *b, uint32_t v)
{
	return wire_put_be(b, v, 4);
}

int wire_put_u64(struct buf *b, uint64_t v)
{
	return wire_put_be(b, v, 8);
}

/* Two's complement: the conversion to uint64_t is defined for every value. */
int wire_put_i64(struct buf *b, int64_t v)
{
	return wire_put_be(b, (uint64_t)v, 8);
}

int wire_put_raw(struct buf *b, const void *data, size_t len)
{
	return buf_append(b, data, len);
}

/* Reserves room for the prefix and the bytes first, so both appends succeed. */
int wire_put_str(struct buf *b, const char *s, size_t len)
{
	if ((uint64_t)len > UINT32_MAX)
		return ERR_TOOBIG;
	if (buf_reserve(b, 4 + len))
		return ERR_NOMEM;
	wire_put_u32(b, (uint32_t)len);
	return wire_put_raw(b, s, len);
}

void wire_reader_init(struct wire_reader *r, const void *data, size_t len)
{
	r->pos = data;
	r->end = len ? r->pos + len : r->pos; /* no arithmetic on a NULL base */
	r->err = 0;
}

/* Records the reader's first error and empties it. */
static void wire_fail(struct wire_reader *r, int err)
{
	if (!r->err)
		r->err = err;
	r->pos = r->end;
}

/* Returns the next n bytes and steps over them, or NULL (and fails the
 * reader) if fewer remain or it has already failed. */
static const uint8_t *wire_take(struct wire_reader *r, size_t n)
{
	const uint8_t *p = r->pos;

	if (r->err)
		return NULL;
	if ((size_t)(r->end - r->pos) < n) {
		wire_fail(r, ERR_TRUNC);
		return NULL;
	}
	if (n)
		r->pos += n;
	return p;
}

static uint64_t wire_get_be(struct wire_reader *r, size_t n)
{
	const uint8_t *p = wire_take(r, n);
	uint64_t v = 0;

	if (!p)
		return 0;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

uint8_t wire_get_u8(struct wire_reader *r)
{
	return (uint8_t)wire_get_be(r, 1);
}

uint16_t wire_get_u16(struct wire_reader *r)
{
	return (uint16_t)wire_get_be(r, 2);
}

uint32_t wire_get_u32(struct wire_reader *r)
{
	return (uint32_t)wire_get_be(r, 4);
}

uint64_t wire_get_u64(struct wire_reader *r)
{
	return wire_get_be(r, 8);
}

/* Undoes wire_put_i64 without relying on implementation-defined conversion. */
int64_t wire_get_i64(struct wire_reader *r)
{
	uint64_t u = wire_get_be(r, 8);

	if (u <= INT64_MAX)
		return (int64_t)u;
	return -(int64_t)(UINT64_MAX - u) - 1;
}

void wire_get_raw(struct wire_reader *r, void *out, size_t len)
{
	const uint8_t *p = wire_take(r, len);

	if (len == 0)
		return;
	if (p)
		memcpy(out, p, len);
	else
		memset(out, 0, len);
}

const char *wire_get_str(struct wire_reader *r, uint32_t *len, uint32_t max)
{
	uint32_t n = wire_get_u32(r);
	const uint8_t *p;

	*len = 0;
	if (r->err)
		return NULL;
	if (max && n > max) {
		wire_fail(r, ERR_TOOBIG);
		return NULL;
	}
	p = wire_take(r, n);
	if (!p)
		return NULL;
	*len = n;
	return (const char *)p;
}

size_t wire_remaining(const struct wire_reader *r)
{
	return (size_t)(r->end - r->pos);
}

int wire_finish(const struct wire_reader *r)
{
	if (r->err)
		return r->err;
	return r->pos == r->end ? 0 : ERR_TRAILING;
}
