/*
 * hex.h - lowercase hexadecimal, as Nostr writes ids, keys and signatures.
 *
 * Both functions write into the caller's buffers and allocate nothing.
 */
#ifndef COMMON_HEX_H
#define COMMON_HEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the hex_len characters at hex into out_len bytes at out.
 * Returns 0, or ERR_INVAL with out unspecified when hex_len is not
 * 2*out_len or a character is not 0-9 or a-f.  Uppercase is refused because
 * NIP-01 requires lowercase.
 */
int hex_decode(const char *hex, size_t hex_len, uint8_t *out, size_t out_len);

/* Writes 2*len lowercase hex characters and a NUL into out (2*len+1 bytes). */
void hex_encode(const uint8_t *in, size_t len, char *out);

#endif
