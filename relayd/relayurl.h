/*
 * relayurl.h - relay URLs compared as NIP-42 allows, and the URL of a bind.
 *
 * Two spellings name one relay when their scheme (ws or wss), host, port
 * and path agree after normalization: scheme and host lowercased, a
 * trailing dot and the default port (80, 443) dropped, the path lowercased
 * without trailing slashes, query and fragment ignored.  localhost,
 * 127.0.0.1 and [::1] are one host, since each names this machine; no other
 * names are made equal, so a tag naming another machine never matches.
 * Pure functions, no allocation: any thread may call them.
 */
#ifndef RELAYD_RELAYURL_H
#define RELAYD_RELAYURL_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the ws:// or wss:// URLs a and b name the same relay.  False
 * when either is NULL or not such a URL. */
bool relayurl_same(const char *a, const char *b);

/*
 * Whether the ws:// or wss:// URL names the host a client connected to,
 * given as its HTTP Host header ("host" or "host:port").  Only the host and
 * port count: a proxy may have served the client over TLS or another path.
 * A Host without a port means the default port of the URL's scheme.  False
 * when either is NULL or malformed.
 */
bool relayurl_names_host(const char *url, const char *host_header);

/* Whether bind is an address that listens on every interface ("0.0.0.0",
 * "::", "[::]" or empty). */
bool relayurl_bind_is_wildcard(const char *bind);

/* Writes a URL a client on this machine can dial for a listener on bind and
 * port: ws://localhost:PORT for a wildcard, brackets around an IPv6
 * address.  Truncated to out_len - 1 bytes. */
void relayurl_of_bind(const char *bind, unsigned port, char *out, size_t out_len);

#endif
