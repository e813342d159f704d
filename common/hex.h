/*
 * hex.h - lowercase hexadecimal, as Nostr writes ids, keys and signatures.
 */
#ifndef COMMON_HEX_H
#define COMMON_HEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes exactly 2*out_len lowercase hex characters from hex (hex_len must
 * equal 2*out_len).  Uppercase is refused: NIP-01 requires lowercase.
 * Returns 0, or ERR_INVAL with out unspecified.
 */
int hex_decode(const char *hex, size_t hex_len, uint8_t *out, size_t out_len);

/* Writes 2*len lowercase hex characters and a NUL into out (2*len+1 bytes). */
void hex_encode(const uint8_t *in, size_t len, char *out);

#endif
