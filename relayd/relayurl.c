/* relayurl.c - relay URLs compared as NIP-42 allows (see relayurl.h). */
#include "relayurl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RELAYURL_HOST_MAX 256
#define RELAYURL_PATH_MAX 512

struct relayurl_parts {
	bool tls;
	unsigned port; /* 0: none given */
	char host[RELAYURL_HOST_MAX];
	char path[RELAYURL_PATH_MAX];
};

static void relayurl_lower(char *out, const char *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[n] = '\0';
}

/* Every name of this machine's loopback becomes "localhost". */
static void relayurl_loopback(char *host)
{
	if (!strcmp(host, "127.0.0.1") || !strcmp(host, "[::1]"))
		strcpy(host, "localhost");
}

/* ":PORT" at *p, if there: 1 to 65535 in decimal.  Returns 0 or -1. */
static int relayurl_port(const char **p, unsigned *port)
{
	char *stop;
	unsigned long v;

	*port = 0;
	if (**p != ':')
		return 0;
	(*p)++;
	if (!isdigit((unsigned char)**p))
		return **p == '\0' || strchr("/?#", **p) ? 0 : -1; /* "host:" is the default */
	v = strtoul(*p, &stop, 10);
	if (v == 0 || v > 65535)
		return -1;
	*port = (unsigned)v;
	*p = stop;
	return 0;
}

/* Reads "host[:port]" at *p, up to a '/', '?', '#' or the end, into u (host
 * normalized).  Returns 0 with *p past it, or -1 when malformed. */
static int relayurl_authority(const char **p, struct relayurl_parts *u)
{
	const char *s = *p, *end;
	size_t n;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return -1;
		end++;
	} else {
		end = s + strcspn(s, ":/?#");
	}
	n = (size_t)(end - s);
	if (n == 0 || n >= sizeof(u->host) || memchr(s, '@', n))
		return -1; /* no user info in a relay URL */
	relayurl_lower(u->host, s, n);
	if (n > 1 && u->host[n - 1] == '.')
		u->host[n - 1] = '\0'; /* the fully qualified spelling */
	relayurl_loopback(u->host);
	if (relayurl_port(&end, &u->port) || (*end && !strchr("/?#", *end)))
		return -1;
	*p = end;
	return 0;
}

static int relayurl_parse(const char *url, struct relayurl_parts *u)
{
	const char *p = url;
	size_t n;

	if (!url)
		return -1;
	u->tls = !strncasecmp(p, "wss://", 6);
	if (!u->tls && strncasecmp(p, "ws://", 5))
		return -1;
	p += u->tls ? 6 : 5;
	if (relayurl_authority(&p, u))
		return -1;
	n = strcspn(p, "?#");
	while (n && p[n - 1] == '/')
		n--;
	if (n >= sizeof(u->path))
		return -1;
	relayurl_lower(u->path, p, n);
	return 0;
}

static unsigned relayurl_port_of(const struct relayurl_parts *u)
{
	return u->port ? u->port : u->tls ? 443 : 80;
}

bool relayurl_same(const char *a, const char *b)
{
	struct relayurl_parts x, y;

	if (relayurl_parse(a, &x) || relayurl_parse(b, &y))
		return false;
	return x.tls == y.tls && relayurl_port_of(&x) == relayurl_port_of(&y) &&
	       !strcmp(x.host, y.host) && !strcmp(x.path, y.path);
}

bool relayurl_names_host(const char *url, const char *host_header)
{
	struct relayurl_parts u, h;
	const char *p = host_header;

	if (relayurl_parse(url, &u) || !p || relayurl_authority(&p, &h) || *p)
		return false;
	return !strcmp(u.host, h.host) &&
	       relayurl_port_of(&u) == (h.port ? h.port : u.tls ? 443u : 80u);
}

bool relayurl_bind_is_wildcard(const char *bind)
{
	return !bind[0] || !strcmp(bind, "0.0.0.0") || !strcmp(bind, "::") || !strcmp(bind, "[::]");
}

void relayurl_of_bind(const char *bind, unsigned port, char *out, size_t out_len)
{
	if (relayurl_bind_is_wildcard(bind))
		snprintf(out, out_len, "ws://localhost:%u", port);
	else if (strchr(bind, ':') && bind[0] != '[')
		snprintf(out, out_len, "ws://[%s]:%u", bind, port);
	else
		snprintf(out, out_len, "ws://%s:%u", bind, port);
}
