/*
 * peerlink.h - the URLs and the TLS of the links between the workers and
 * stored.
 *
 * A link URL is ipc://path (one machine, today's default), tcp://host:port
 * or tls+tcp://host:port, with an IPv6 host in brackets
 * (tls+tcp://[2001:db8::1]:7801).  stored listens on each of its three
 * link URLs and every worker dials them, so a worker host needs no port
 * open but its websocket one.  With tls+tcp:// both ends load the same
 * three files (a CA, their own certificate, its key) and require a
 * certificate from the peer that the CA signed (mutual TLS).  Plain tcp://
 * carries events unencrypted and lets anyone who reaches the port speak
 * for a worker, so peerlink_check() refuses it off loopback.
 *
 * This module knows nothing of the config: callers hand it strings.
 */
#ifndef COMMON_PEERLINK_H
#define COMMON_PEERLINK_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>

/* The TLS files of a tls+tcp:// link, all PEM.  server_name (may be "" or
 * NULL) is the name a dialer expects in the listener's certificate; ""
 * takes the URL's host. */
struct peerlink_tls {
	const char *ca_file;
	const char *cert_file;
	const char *key_file;
	const char *server_name;
};

/* Whether url is an ipc:// URL. */
bool peerlink_is_ipc(const char *url);

/* Whether url is a tls+tcp:// URL. */
bool peerlink_is_tls(const char *url);

/*
 * Checks that url is ipc://, tcp:// or tls+tcp:// with a host and a port,
 * and that a tcp:// one names a loopback host (127.0.0.0/8, ::1,
 * localhost) unless insecure.  Returns 0, or ERR_CONFIG with a one-line
 * reason naming key in err.
 */
int peerlink_check(const char *key, const char *url, bool insecure, char *err, size_t err_len);

/*
 * Writes url with add added to its port into out (out_len bytes).  This is
 * how one reply URL becomes a port per worker.  Returns 0, ERR_CONFIG (no
 * port, or the sum passes 65535) or ERR_TOOBIG.
 */
int peerlink_port_plus(const char *url, unsigned add, char *out, size_t out_len);

/*
 * Dials url from sock in the background (nng redials by itself), with
 * tls's files for a tls+tcp:// URL (tls may be NULL otherwise).  *dialer
 * (may be NULL) is the new dialer.  Returns 0, or ERR_NNG / ERR_IO
 * (logged: a file that cannot be read, a bad certificate).
 */
int peerlink_dial(nng_socket sock, const char *url, const struct peerlink_tls *tls,
		  nng_dialer *dialer);

/*
 * Listens on url from sock (tcp:// or tls+tcp://; ipc:// goes through
 * rundir_listen() for its file mode), with tls's files for tls+tcp://.
 * Returns 0, or ERR_NNG / ERR_IO (logged).
 */
int peerlink_listen(nng_socket sock, const char *url, const struct peerlink_tls *tls,
		    nng_listener *listener);

#endif
