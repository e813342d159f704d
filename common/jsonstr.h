/*
 * jsonstr.h - writing JSON strings the way NIP-01 serializes them.
 *
 * Exactly seven characters are escaped: `"` `\` newline, carriage return,
 * tab, backspace and form feed (as \" \\ \n \r \t \b \f).  Every other byte
 * is written as itself: no \/ and no \uXXXX, so non-ASCII, emoji, DEL and
 * other control characters go out raw.  The same function serves the event
 * id hash, the stored canonical JSON and the relay's own replies, so what is
 * hashed is what is sent.
 */
#ifndef COMMON_JSONSTR_H
#define COMMON_JSONSTR_H

#include <stddef.h>

struct buf;

/* Appends `"` + escaped s (len bytes) + `"` to out, exactly as NIP-01
 * serializes for the id hash.  Returns 0 or ERR_NOMEM. */
int jsonstr_append(struct buf *out, const char *s, size_t len);

/*
 * The same, for JSON that is sent or stored: as jsonstr_append(), plus the
 * other control characters U+0000-U+001F as \u00XX, which JSON (RFC 8259)
 * requires and raw NIP-01 leaves alone.  A client decoding it gets back the
 * very string that was hashed.  Returns 0 or ERR_NOMEM.
 */
int jsonstr_append_wire(struct buf *out, const char *s, size_t len);

#endif
