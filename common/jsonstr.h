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

/* Appends `"` + escaped s (len bytes) + `"` to out.  Returns 0 or ERR_NOMEM. */
int jsonstr_append(struct buf *out, const char *s, size_t len);

#endif
