/*
 * hll.h - the NIP-45 HyperLogLog: 256 one-byte registers over pubkeys.
 *
 * A filter is eligible when it has exactly one tag constraint with exactly
 * one value of 64 hex characters (the NIP's examples: reactions to an event,
 * `{"kinds":[7],"#e":[id]}`, and followers, `{"kinds":[3],"#p":[pk]}`).
 * Its offset is the hex digit at position 32 of that value plus 8 (8..23).
 * Each counted event's pubkey sets register pubkey[offset] to the larger of
 * its value and 1 + the number of leading zero bits after that byte, so
 * relays that agree on the offset produce mergeable registers.
 */
#ifndef STORED_HLL_H
#define STORED_HLL_H

#include <stdint.h>

#include "../common/filter.h"

#define HLL_REGISTERS 256

/* The offset for f, or -1 when f is not eligible. */
int hll_offset(const struct filter *f);

/* Adds pubkey to registers at offset (from hll_offset). */
void hll_add(uint8_t registers[HLL_REGISTERS], int offset, const uint8_t pubkey[32]);

#endif
