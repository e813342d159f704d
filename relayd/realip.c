/* realip.c - the forwarded client address (see realip.h). */
#include "realip.h"

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/cidr.h"
#include "../common/config.h"
#include "../common/log.h"

#define REALIP_MAX_LINES 16 /* header lines read; more is no proxy's doing */

int realip_header_kind(const char *name)
{
	if (name[0] == '\0')
		return REALIP_OFF;
	if (strcasecmp(name, "X-Forwarded-For") == 0)
		return REALIP_FORWARDED_FOR;
	return -1;
}

static bool realip_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Parses text[start, end) with its spaces trimmed; -1 if malformed. */
static int realip_parse_trimmed(const char *text, size_t start, size_t end, uint8_t out[16])
{
	while (start < end && realip_space(text[start]))
		start++;
	while (end > start && realip_space(text[end - 1]))
		end--;
	return cidr_addr_parse(text + start, end - start, out);
}

/* Whether an element of a comma list is empty (RFC 9110 5.6.1 allows it). */
static bool realip_blank(const char *text, size_t start, size_t end)
{
	for (size_t i = start; i < end; i++)
		if (!realip_space(text[i]))
			return false;
	return true;
}

/* Walks one line from its right end.  Returns 1 when *cur is the answer
 * (an untrusted address, or the last good one before garbage), 0 to go
 * on with the line before it. */
static int realip_walk_line(const char *line, const struct cidr_list *trusted, uint8_t cur[16])
{
	size_t end = strlen(line);

	for (;;) {
		size_t start = end;
		uint8_t addr[16];

		while (start > 0 && line[start - 1] != ',')
			start--;
		if (!realip_blank(line, start, end)) {
			if (realip_parse_trimmed(line, start, end, addr))
				return 1;
			memcpy(cur, addr, 16);
			if (!cidr_list_has(trusted, addr))
				return 1;
		}
		if (start == 0)
			return 0;
		end = start - 1;
	}
}

void realip_pick(enum realip_header kind, const char *const *lines, size_t nlines,
		 const struct cidr_list *trusted, const uint8_t peer[16], uint8_t out[16])
{
	memcpy(out, peer, 16);
	if (kind == REALIP_OFF || nlines == 0 || !cidr_list_has(trusted, peer))
		return;
	for (size_t i = nlines; i > 0; i--)
		if (realip_walk_line(lines[i - 1], trusted, out))
			return;
}

/* The lines of X-Forwarded-For, each a NUL-terminated string in one
 * allocation (*block, freed by the caller).  Returns how many: 0 for more
 * than REALIP_MAX_LINES, since the right end would be missing and a
 * client-written line taken for the proxy's. */
static size_t realip_forwarded_lines(struct lws *wsi, const char **lines, char **block)
{
	int total = lws_hdr_total_length(wsi, WSI_TOKEN_X_FORWARDED_FOR);
	size_t n = 0, used = 0, size;

	*block = NULL;
	if (total <= 0)
		return 0;
	size = (size_t)total + 2 * (REALIP_MAX_LINES + 1);
	*block = malloc(size);
	if (!*block)
		return 0;
	for (int frag = 0;; frag++) {
		int len = lws_hdr_copy_fragment(wsi, *block + used, (int)(size - used),
						WSI_TOKEN_X_FORWARDED_FOR, frag);

		if (len < 0)
			return n;
		if (n == REALIP_MAX_LINES)
			return 0;
		lines[n++] = *block + used;
		used += (size_t)len + 1;
	}
}

void realip_conn_address(const struct config *cfg, struct lws *wsi, char *ip, size_t ip_len)
{
	int kind = realip_header_kind(cfg->real_ip_header);
	const char *lines[REALIP_MAX_LINES];
	char *block = NULL;
	struct cidr_list trusted;
	uint8_t peer[16], client[16];
	size_t n;

	ip[0] = '\0';
	lws_get_peer_simple(wsi, ip, ip_len);
	/* The config was checked when loaded: these fail only on a
	 * peer that is no IP address (a Unix socket). */
	if (kind <= REALIP_OFF || cidr_list_parse(cfg->trusted_proxies, &trusted) ||
	    cidr_addr_parse(ip, strlen(ip), peer) || !cidr_list_has(&trusted, peer))
		return;
	n = realip_forwarded_lines(wsi, lines, &block);
	realip_pick((enum realip_header)kind, lines, n, &trusted, peer, client);
	free(block);
	if (memcmp(client, peer, 16) != 0) {
		char text[CIDR_ADDR_TEXT];

		cidr_addr_format(client, text, sizeof(text));
		log_debug("connection from %s through proxy %s (%s)", text, ip, cfg->real_ip_header);
		snprintf(ip, ip_len, "%s", text);
	}
}
