/* peerlink.c - link URLs and mutual TLS between workers and stored (see peerlink.h). */
#include "peerlink.h"

#include <arpa/inet.h>
#include <errno.h>
#include <nng/supplemental/tls/tls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "log.h"

/* A PEM file is a few kilobytes; a larger one is not a certificate. */
#define PEERLINK_PEM_MAX 65536

bool peerlink_is_ipc(const char *url)
{
	return strncmp(url, "ipc://", 6) == 0;
}

bool peerlink_is_tls(const char *url)
{
	return strncmp(url, "tls+tcp://", 10) == 0;
}

/* The part after "scheme://" of a tcp:// or tls+tcp:// URL, else NULL. */
static const char *peerlink_authority(const char *url)
{
	if (strncmp(url, "tcp://", 6) == 0)
		return url + 6;
	if (peerlink_is_tls(url))
		return url + 10;
	return NULL;
}

/* Splits "host:port" or "[v6]:port" into host (brackets dropped) and the
 * port's text.  Returns 0 or ERR_CONFIG. */
static int peerlink_split(const char *auth, char *host, size_t host_len, const char **port)
{
	const char *colon;
	size_t n;

	if (auth[0] == '[') {
		const char *close = strchr(auth, ']');

		if (!close || close[1] != ':')
			return ERR_CONFIG;
		n = (size_t)(close - auth - 1);
		auth++;
		colon = close + 1;
	} else {
		colon = strrchr(auth, ':');
		if (!colon || memchr(auth, ':', (size_t)(colon - auth)))
			return ERR_CONFIG; /* an IPv6 host needs brackets */
		n = (size_t)(colon - auth);
	}
	if (n == 0 || n >= host_len || colon[1] < '0' || colon[1] > '9')
		return ERR_CONFIG;
	memcpy(host, auth, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

/* The port of "host:port", or -1 when it is no number from 0 to 65535. */
static long peerlink_port(const char *text)
{
	char *end;
	long port;

	errno = 0;
	port = strtol(text, &end, 10);
	if (errno || *end || port < 0 || port > 65535)
		return -1;
	return port;
}

static bool peerlink_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (strcmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

int peerlink_check(const char *key, const char *url, bool insecure, char *err, size_t err_len)
{
	const char *auth = peerlink_authority(url), *port;
	char host[256];

	if (peerlink_is_ipc(url) && url[6] == '/')
		return 0;
	if (!auth || peerlink_split(auth, host, sizeof(host), &port) || peerlink_port(port) < 0) {
		snprintf(err, err_len, "%s must be ipc:///path, tcp://host:port or tls+tcp://host:port"
			 " (an IPv6 host in brackets)", key);
		return ERR_CONFIG;
	}
	if (!peerlink_is_tls(url) && !insecure && !peerlink_loopback(host)) {
		snprintf(err, err_len, "%s is plain tcp:// to %s, which is not loopback: use tls+tcp://"
			 " or set link_insecure = 1", key, host);
		return ERR_CONFIG;
	}
	return 0;
}

int peerlink_port_plus(const char *url, unsigned add, char *out, size_t out_len)
{
	const char *auth = peerlink_authority(url), *port;
	char host[256];
	long p;
	int n;

	if (!auth || peerlink_split(auth, host, sizeof(host), &port) ||
	    (p = peerlink_port(port)) < 0 || p + (long)add > 65535)
		return ERR_CONFIG;
	n = snprintf(out, out_len, "%.*s%ld", (int)(port - url), url, p + (long)add);
	return n < 0 || (size_t)n >= out_len ? ERR_TOOBIG : 0;
}

/* Reads the PEM file at path into a fresh NUL-terminated string. */
static char *peerlink_read_pem(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;

	if (!f) {
		log_warn("cannot read %s", path);
		return NULL;
	}
	text = malloc(PEERLINK_PEM_MAX + 1);
	n = text ? fread(text, 1, PEERLINK_PEM_MAX, f) : 0;
	fclose(f);
	if (text)
		text[n] = '\0';
	return text;
}

/* Loads the CA, our certificate and its key into cfg, and requires a
 * verified peer.  Returns 0, ERR_IO (a file) or ERR_NNG (its content). */
static int peerlink_tls_load(nng_tls_config *cfg, const struct peerlink_tls *tls)
{
	char *cert = peerlink_read_pem(tls->cert_file);
	char *key = cert ? peerlink_read_pem(tls->key_file) : NULL;
	int rv;

	if (!key) {
		free(cert);
		return ERR_IO;
	}
	if ((rv = nng_tls_config_ca_file(cfg, tls->ca_file)) != 0)
		log_warnx("TLS CA file %s: %s", tls->ca_file, nng_strerror(rv));
	else if ((rv = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0)
		log_warnx("TLS certificate %s or key %s: %s", tls->cert_file, tls->key_file,
			  nng_strerror(rv));
	else if ((rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED)) != 0)
		log_warnx("TLS peer verification: %s", nng_strerror(rv));
	free(cert);
	free(key);
	return rv ? ERR_NNG : 0;
}

/* A TLS configuration for mode from tls's files, or NULL (logged).  The
 * caller frees its reference once nng holds one. */
static nng_tls_config *peerlink_tls_new(nng_tls_mode mode, const struct peerlink_tls *tls,
					const char *url)
{
	nng_tls_config *cfg;
	char host[256];
	const char *port;

	if (!tls || !tls->ca_file[0] || !tls->cert_file[0] || !tls->key_file[0]) {
		log_warnx("%s needs link_tls_ca_file, link_tls_cert_file and link_tls_key_file", url);
		return NULL;
	}
	if (nng_tls_config_alloc(&cfg, mode))
		return NULL;
	if (peerlink_tls_load(cfg, tls) == 0 &&
	    (mode == NNG_TLS_MODE_SERVER ||
	     (peerlink_split(url + 10, host, sizeof(host), &port) == 0 &&
	      nng_tls_config_server_name(cfg, tls->server_name && tls->server_name[0]
						       ? tls->server_name
						       : host) == 0)))
		return cfg;
	nng_tls_config_free(cfg);
	return NULL;
}

int peerlink_dial(nng_socket sock, const char *url, const struct peerlink_tls *tls,
		  nng_dialer *dialer)
{
	nng_tls_config *cfg = NULL;
	nng_dialer d;
	int rv = nng_dialer_create(&d, sock, url);

	if (rv == 0 && peerlink_is_tls(url)) {
		cfg = peerlink_tls_new(NNG_TLS_MODE_CLIENT, tls, url);
		rv = cfg ? nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg) : NNG_EINVAL;
		if (cfg)
			nng_tls_config_free(cfg); /* the dialer holds its own reference */
	}
	if (rv == 0)
		rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	if (rv) {
		log_warnx("dial %s: %s", url, nng_strerror(rv));
		nng_dialer_close(d);
		return ERR_NNG;
	}
	if (dialer)
		*dialer = d;
	return 0;
}

int peerlink_listen(nng_socket sock, const char *url, const struct peerlink_tls *tls,
		    nng_listener *listener)
{
	nng_tls_config *cfg = NULL;
	nng_listener l;
	int rv = nng_listener_create(&l, sock, url);

	if (rv == 0 && peerlink_is_tls(url)) {
		cfg = peerlink_tls_new(NNG_TLS_MODE_SERVER, tls, url);
		rv = cfg ? nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, cfg) : NNG_EINVAL;
		if (cfg)
			nng_tls_config_free(cfg);
	}
	if (rv == 0)
		rv = nng_listener_start(l, 0);
	if (rv) {
		log_warnx("listen %s: %s", url, nng_strerror(rv));
		nng_listener_close(l);
		return ERR_NNG;
	}
	if (listener)
		*listener = l;
	return 0;
}
