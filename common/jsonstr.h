/*
 * jsonstr.h - writing JSON strings the way NIP-01 serializes them.
 *
 * For the id hash (jsonstr_append) exactly seven characters are escaped:
 * `"` `\` newline, carriage return, tab, backspace and form feed (as \" \\
 * \n \r \t \b \f); every other byte is written as itself: no \/ and no
 * \uXXXX, so non-ASCII, emoji, DEL and other control characters stay raw.
 * JSON that is sent or stored (jsonstr_append_wire) must be valid JSON, so
 * it also escapes the other control characters as \u00XX; a client decoding
 * it gets back exactly the strings that were hashed.  That wire form is also
 * what JavaScript's JSON.stringify() writes, so nostr-tools hashes it.
 *
 * A decoded U+0000 is the two bytes C0 80 (json.h); both writers turn it
 * back into U+0000: a NUL byte for the hash, \u0000 on the wire.  A NUL
 * byte itself is written the same way.
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
 * True if jsonstr_append() and jsonstr_append_wire() write the len bytes at
 * s differently: s holds a control character other than the seven, or a
 * decoded U+0000.  Then the id a client hashed may be either form (see
 * event.h).
 */
bool jsonstr_forms_differ(const char *s, size_t len);

/* The length in bytes of the string the len bytes at s decode to: each
 * decoded U+0000 (two bytes, json.h) counts as the one byte it stands for. */
size_t jsonstr_decoded_len(const char *s, size_t len);

#endif
