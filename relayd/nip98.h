/*
 * nip98.h - checking a NIP-98 HTTP authorization for the NIP-86 API.
 *
 * The header is "Authorization: Nostr <base64 of a kind 27235 event>".
 * The event must verify (id and signature), be within NIP98_WINDOW seconds
 * of now, carry `method` = POST, a `u` tag naming this relay (its ws(s)://
 * URL or the same address as http(s)://, compared without case or trailing
 * slash) and a `payload` tag with the SHA-256 of the request body, and its
 * pubkey must be one of admin_pubkeys.
 */
#ifndef RELAYD_NIP98_H
#define RELAYD_NIP98_H

#include <stddef.h>
#include <stdint.h>

#define NIP98_KIND 27235
#define NIP98_WINDOW 60

struct relayd;
struct sig_verifier;

/* Checks header (the Authorization value, NUL-terminated) against body
 * (body_len bytes) with verifier v.  Returns NULL and the admin's pubkey in
 * pubkey when it authorizes the request, else a static reason for a 401. */
const char *nip98_check(const struct relayd *r, struct sig_verifier *v, const char *header,
			const char *body, size_t body_len, uint8_t pubkey[32]);

#endif
