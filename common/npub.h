/*
 * npub.h - NIP-19 public keys: the bech32 "npub1..." form of a pubkey.
 *
 * Only decoding, for operators who paste a key as clients show it
 * (relayctl ban).  Bech32 is BIP-173's: the human-readable part "npub",
 * the separator "1", 5-bit groups and a 6-character checksum.  Allocates
 * nothing.
 */
#ifndef COMMON_NPUB_H
#define COMMON_NPUB_H

#include <stdint.h>

/* Decodes text, an "npub1..." string all lowercase or all uppercase, into
 * the 32-byte pubkey at out.  Returns 0, or ERR_INVAL with out unspecified
 * for any other prefix, a character outside bech32's alphabet, a wrong
 * checksum, or a payload that is not exactly 32 bytes. */
int npub_decode(const char *text, uint8_t out[32]);

/* Writes the 64 lowercase hex digits of the pubkey that text names, and a
 * NUL, into hex: text is either already that hex or an npub.  Returns 0,
 * or ERR_INVAL (hex unspecified) when it is neither. */
int npub_to_hex(const char *text, char hex[65]);

#endif
