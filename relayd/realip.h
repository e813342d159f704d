/*
 * realip.h - the client's address behind a reverse proxy.
 *
 * With real_ip_header set, a connection from a trusted proxy (a peer in
 * trusted_proxies) is known by the address the proxy forwarded in that
 * header; a connection from any other peer keeps its peer address.  The
 * result is what every per-address check uses: iplimit.h, NIP-86 blockip,
 * the logs and the loopback exemption.
 *
 * X-Forwarded-For is a comma list that each proxy appends its peer to, so
 * the list is walked from the right: trusted proxies are skipped, and the
 * first address not trusted is the client.  If every entry is trusted, the
 * left-most is taken.  A malformed entry stops the walk: the last good
 * address right of it is taken (the trusted hop that passed the garbage
 * on), since nothing left of it can be vouched for.
 *
 * X-Forwarded-For is the only header: lws 4.1 (Debian 12) gives no access
 * to an unknown request header such as X-Real-IP at the handshake, and
 * nginx, Caddy and HAProxy all send X-Forwarded-For.
 */
#ifndef RELAYD_REALIP_H
#define RELAYD_REALIP_H

#include <stddef.h>
#include <stdint.h>

struct cidr_list;
struct config;
struct lws;

enum realip_header { REALIP_OFF, REALIP_FORWARDED_FOR };

/* The header a real_ip_header value names ("" is REALIP_OFF, case does not
 * matter), or -1 for any other name. */
int realip_header_kind(const char *name);

/* The client's address for a connection from peer: written to out.
 * lines: the values of the header's lines in the order received (nlines
 * may be 0).  out is peer when peer is not in trusted or the header is
 * unusable. */
void realip_pick(enum realip_header kind, const char *const *lines, size_t nlines,
		 const struct cidr_list *trusted, const uint8_t peer[16], uint8_t out[16]);

/* The address a new websocket connection on wsi is known by, as text, into
 * ip (ip_len bytes, at least 64): lws's peer address, or the forwarded one
 * when cfg's real_ip_header applies.  Call once, when the connection opens
 * (the request headers are gone after). */
void realip_conn_address(const struct config *cfg, struct lws *wsi, char *ip, size_t ip_len);

#endif
