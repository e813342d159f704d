/*
 * ws_handshake.h - the HTTP/1.1 upgrade that opens a websocket (RFC 6455 4).
 *
 * The client sends a GET with a fresh random Sec-WebSocket-Key; the server
 * must answer 101 with Upgrade: websocket, Connection: upgrade and
 * Sec-WebSocket-Accept = base64(SHA-1(key + the RFC's GUID)).  SHA-1 and
 * base64 come from OpenSSL's libcrypto.  The relay names the worker that
 * took the connection in X-Relay-Worker, which is returned when present.
 */
#ifndef COMMON_WS_HANDSHAKE_H
#define COMMON_WS_HANDSHAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

#define WS_KEY_LEN 24 /* base64 of 16 bytes */

/* Writes a new random key (WS_KEY_LEN characters and a NUL). Returns 0 or ERR_IO. */
int ws_handshake_key(char key[WS_KEY_LEN + 1]);

/* The Sec-WebSocket-Accept value a server must send for key, into accept (29 bytes). */
void ws_handshake_accept(const char *key, char accept[29]);

/* Appends the upgrade request for host:port and path to out, offering
 * permessage-deflate when deflate is set.  Returns 0 or ERR_NOMEM. */
int ws_handshake_request(struct buf *out, const char *host, uint16_t port, const char *path,
			 const char *key, bool deflate);

/*
 * Length of the response head in data (through the blank line), or 0 while
 * it is incomplete.
 */
size_t ws_handshake_head_len(const char *data, size_t len);

/*
 * Checks a complete response head (len bytes from ws_handshake_head_len)
 * against key.  Returns 0 and sets *worker to X-Relay-Worker (or -1 when
 * absent) and *deflate to whether the answer accepted permessage-deflate,
 * or ERR_INVAL when the status is not 101 or a required header is missing
 * or wrong.
 */
int ws_handshake_check(const char *head, size_t len, const char *key, int *worker, int *deflate);

#endif
