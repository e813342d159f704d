/*
 * private.h - kinds readable only by their parties (config private_kinds,
 * e.g. "4,1059": direct messages and gift wraps).
 *
 * An event of a private kind goes to a subscription only if one of the
 * pubkeys its connection has authenticated (NIP-42) is the event's author
 * or is named in one of its `p` tags.  History is chosen with the pubkeys
 * of the REQ's time; an AUTH after it adds its pubkey to the subscription
 * for what is sent from then on (MAIL_AUTHED).  The check runs in
 * the worker on everything it is about to send — stored history and live
 * deliveries alike — so nothing private leaves without it.  A COUNT that
 * could count private events is refused (a count would leak their number).
 * A REQ all of whose filters name private kinds only, from a connection
 * that has not authenticated, is answered CLOSED "auth-required:", so the
 * client knows to AUTH and ask again.
 */
#ifndef RELAYD_PRIVATE_H
#define RELAYD_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;
struct filter;

/* Whether kind is listed in cfg->private_kinds. */
bool private_kind(const struct config *cfg, uint32_t kind);
/* Whether filter f could select events of a private kind. */
bool private_filter_reaches(const struct config *cfg, const struct filter *f);
/* Whether filter f selects private kinds only (it lists kinds, all
 * private): before AUTH it can find nothing, so the REQ is answered
 * CLOSED "auth-required:" (NIP-42) rather than an empty EOSE. */
bool private_filter_only(const struct config *cfg, const struct filter *f);
/*
 * Whether the event in json (the relay's canonical serialization) may go to
 * a subscription whose viewers are the n pubkeys given.
 */
bool private_visible(const struct config *cfg, const char *json, size_t len,
		     const uint8_t (*viewers)[32], uint32_t n);

#endif
