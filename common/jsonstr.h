/*
 * jsonstr.h - writing JSON strings the way NIP-01 serializes them.
 *
 * For the id hash (jsonstr_append) exactly seven characters are escaped:
 * `"` `\` newline, carriage return, tab, backspace and form feed (as \" \\
 * \n \r \t \b \f); every other byte is written as itself: no \/ and no
 * \uXXXX, so non-ASCII, emoji, DEL and other control characters stay raw.
 * JSON that is sent or stored (jsonstr_append_wire) must be valid JSON, so
 * it also escapes the other control characters as \u00XX; a client decoding
 * it gets back exactly the strings that were hashed.
 */
#ifndef COMMON_JSONSTR_H
#define COMMON_JSONSTR_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

/* Appends the len bytes at s to out as a quoted, escaped JSON string,
 * exactly as NIP-01 serializes it for the id hash.  s may hold any bytes.
 * Returns 0, or ERR_NOMEM with out unchanged. */
int jsonstr_append(struct buf *out, const char *s, size_t len);

/*
 * The same for JSON that is sent or stored; returns 0, or ERR_NOMEM with
 * out unchanged.  It also escapes the other control characters U+0000-U+001F
 * as \u00XX, which JSON (RFC 8259) requires and raw NIP-01 leaves alone.  A
 * client decoding it gets back the very string that was hashed.
 */
int jsonstr_append_wire(struct buf *out, const char *s, size_t len);

/*
 * True if a string in the len bytes of JSON text at json holds the escape
 * \u0000, false otherwise.  cJSON ends a decoded string at its first NUL,
 * so an event's id would be checked over less than its author signed.
 * Callers refuse these messages instead.
 */
bool jsonstr_has_nul_escape(const char *json, size_t len);

#endif
