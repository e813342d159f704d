/*
 * buf.h - a growable byte buffer, for building JSON text and wire messages.
 *
 * A struct buf owns its data; buf_free() releases it.  BUF_INIT (or
 * zeroing) makes an empty buffer that owns nothing yet.  The data is kept
 * NUL-terminated, and the NUL is not counted in len, so text can be
 * printed.  Appends never leave the buffer half-written: on ERR_NOMEM the
 * contents before the call are intact.  Not thread-safe.
 */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0 }

/* Makes room for at least extra more bytes (and the NUL).  Returns 0, or
 * ERR_NOMEM when memory runs out or len + extra would overflow. */
int buf_reserve(struct buf *b, size_t extra);
/* Appends len bytes from data.  Returns 0 or ERR_NOMEM. */
int buf_append(struct buf *b, const void *data, size_t len);
/* Appends a NUL-terminated string.  Returns 0 or ERR_NOMEM. */
int buf_append_str(struct buf *b, const char *s);
/* Appends one byte.  Returns 0 or ERR_NOMEM. */
int buf_append_byte(struct buf *b, char c);
/* Appends a signed integer in decimal.  Returns 0 or ERR_NOMEM. */
int buf_append_int(struct buf *b, int64_t v);
/* Empties the buffer, keeping its memory for reuse. */
void buf_reset(struct buf *b);
/* Hands the data to the caller, who frees it with free(), and empties b.
 * An empty b gives a new "" instead; NULL only if that allocation fails. */
char *buf_take(struct buf *b);
/* Releases the memory and empties b, which may be reused afterwards. */
void buf_free(struct buf *b);

#endif
