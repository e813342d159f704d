/*
 * wire.h - the primitive encoding every inter-process message is built from.
 *
 * Integers are fixed-width big-endian; keys, ids and signatures are raw bytes
 * of their fixed length; strings are a u32 byte length followed by the bytes
 * (no NUL on the wire).  Writers append to the caller's struct buf and
 * never leave half a value behind.  A struct wire_reader borrows the bytes
 * it reads and owns nothing.  It fails with ERR_TRUNC as soon as a value
 * would run past the end.  Once a reader has failed, every later read
 * returns zero and fails too, so a decoder may read all fields and check
 * the error once at the end.
 */
#ifndef PROTO_WIRE_H
#define PROTO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"

/* Writers: each appends v (or len bytes) to b and returns 0, or ERR_NOMEM
 * with b unchanged. */
int wire_put_u8(struct buf *b, uint8_t v);
int wire_put_u16(struct buf *b, uint16_t v);
int wire_put_u32(struct buf *b, uint32_t v);
int wire_put_u64(struct buf *b, uint64_t v);
int wire_put_i64(struct buf *b, int64_t v);
int wire_put_raw(struct buf *b, const void *data, size_t len);
/* Appends len as a u32, then the len bytes at s; ERR_TOOBIG, with b
 * unchanged, when len exceeds UINT32_MAX. */
int wire_put_str(struct buf *b, const char *s, size_t len);

/* A cursor over a received payload; it borrows the bytes. */
struct wire_reader {
	const uint8_t *pos;
	const uint8_t *end;
	int err; /* 0, or the first error met */
};

/* Starts r at the len bytes at data, which must outlive r (data may be
 * NULL when len is 0). */
void wire_reader_init(struct wire_reader *r, const void *data, size_t len);
/* Readers: each returns the next value and steps over it; 0 once r failed. */
uint8_t wire_get_u8(struct wire_reader *r);
uint16_t wire_get_u16(struct wire_reader *r);
uint32_t wire_get_u32(struct wire_reader *r);
uint64_t wire_get_u64(struct wire_reader *r);
int64_t wire_get_i64(struct wire_reader *r);
/* Copies len raw bytes into out (zeroed on failure). */
void wire_get_raw(struct wire_reader *r, void *out, size_t len);
/* Returns a pointer into the payload for a string (not NUL-terminated) and
 * its length in *len; NULL with *len 0 on failure.  max bounds the length
 * (0 = no bound beyond the payload); a longer string sets ERR_TOOBIG. */
const char *wire_get_str(struct wire_reader *r, uint32_t *len, uint32_t max);
/* Returns how many bytes remain. */
size_t wire_remaining(const struct wire_reader *r);
/* Returns r->err, or ERR_TRAILING if bytes remain: a decoder's last call. */
int wire_finish(const struct wire_reader *r);

#endif
