/*
 * cidr.h - IP addresses and address ranges (CIDR), IPv4 and IPv6 alike.
 *
 * An address is held as 16 bytes: an IPv4 address as its IPv4-mapped IPv6
 * form (::ffff:a.b.c.d), so 10.0.0.0/8 also matches ::ffff:10.1.2.3.  A
 * range list is the text of the trusted_proxies key: ranges separated by
 * spaces or commas, each an address with an optional /bits (none: the one
 * address).  Pure functions, no state.
 */
#ifndef COMMON_CIDR_H
#define COMMON_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CIDR_MAX 32      /* ranges in one list */
#define CIDR_ADDR_TEXT 46 /* INET6_ADDRSTRLEN: room for any address's text */

struct cidr {
	uint8_t addr[16];
	uint8_t bits; /* of addr's 128 that must match */
};

struct cidr_list {
	struct cidr nets[CIDR_MAX];
	uint32_t n;
};

/* Parses the len bytes at text (no NUL needed) as one IPv4 or IPv6
 * address into out.  Returns 0, or -1 for anything else (a port, brackets,
 * spaces, a zone id). */
int cidr_addr_parse(const char *text, size_t len, uint8_t out[16]);
/* Writes addr's text to out (at least CIDR_ADDR_TEXT bytes): an
 * IPv4-mapped one as plain IPv4, the form lws and operators use. */
void cidr_addr_format(const uint8_t addr[16], char *out, size_t out_len);
/* Parses a range list (NUL-terminated) into *out.  Returns 0, or -1 for a
 * malformed range, a prefix too long for its family, or more than
 * CIDR_MAX ranges. */
int cidr_list_parse(const char *text, struct cidr_list *out);
/* Whether addr lies in one of l's ranges. */
bool cidr_list_has(const struct cidr_list *l, const uint8_t addr[16]);

#endif
