/*
 * ws_client.h - websocket client connections on one epoll loop.
 *
 * A struct ws_loop owns an epoll instance and every connection made on it;
 * it is used by one thread only (give each thread its own loop).  Nothing
 * runs by itself: the owner calls ws_loop_poll() and the loop calls the
 * connection's handlers from there.
 *
 * Connections (struct ws_conn) belong to their loop.  A pointer to one stays
 * valid until its on_close handler has returned; after that the caller must
 * not use it.  on_close is called exactly once per connection, whether the
 * connect, the handshake or the open connection failed, or a close finished
 * (err 0).  Messages are delivered whole: fragments are joined, pings are
 * answered, and control frames between fragments are handled.
 *
 * Sending appends a masked frame to the connection's output buffer; buffers
 * are written when ws_flush() is called and at both ends of every
 * ws_loop_poll(), and the rest waits for EPOLLOUT.  Output is not bounded
 * here: callers keep their own windows.
 *
 * Only loopback targets are accepted: the load generator must never load
 * anything else, and relayctl sync has no TLS or DNS yet.
 */
#ifndef COMMON_WS_CLIENT_H
#define COMMON_WS_CLIENT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct ws_loop;
struct ws_conn;

struct ws_url {
	char host[64];
	uint16_t port;
	char path[128];
	struct sockaddr_in addr;
};

struct ws_handlers {
	/* The handshake succeeded; the connection can send. */
	void (*on_open)(struct ws_conn *c, void *ud);
	/* One whole text or binary message; data is valid during the call only
	 * and is not NUL-terminated. */
	void (*on_message)(struct ws_conn *c, const char *data, size_t len, void *ud);
	/* The connection is gone: err is 0 after a close handshake, ERR_CLOSED
	 * when the peer closed the TCP connection without one, ERR_IO on a
	 * socket error (see ws_conn_errno), ERR_INVAL on a handshake or protocol
	 * error, ERR_TOOBIG for a message above the loop's cap, ERR_NOMEM. */
	void (*on_close)(struct ws_conn *c, int err, void *ud);
};

/*
 * Parses "ws://HOST:PORT[/path]" where HOST is an IPv4 literal in
 * 127.0.0.0/8 or "localhost".  Returns 0, or ERR_INVAL for anything else
 * (including any non-loopback address).
 */
int ws_url_parse(const char *text, struct ws_url *out);

/*
 * A new loop; messages larger than max_message bytes close their connection
 * with ERR_TOOBIG.  Returns NULL on failure (errno set).
 */
struct ws_loop *ws_loop_new(size_t max_message);

/* Makes the loop's new connections offer permessage-deflate (RFC 7692,
 * no context takeover); those that get it compress what they send and
 * inflate what comes compressed.  Returns 0 or ERR_NOMEM. */
int ws_loop_offer_deflate(struct ws_loop *l);

/* Bytes read from and written to the loop's sockets so far. */
uint64_t ws_loop_bytes_in(const struct ws_loop *l);
uint64_t ws_loop_bytes_out(const struct ws_loop *l);

/* Closes every connection abruptly (no handlers run) and frees the loop. NULL-safe. */
void ws_loop_free(struct ws_loop *l);

/*
 * Starts connecting to u; h (which must outlive the connection) and ud are
 * passed to its handlers.  Returns the connection, or NULL when no socket
 * could be made (errno set; no handler runs).
 */
struct ws_conn *ws_connect(struct ws_loop *l, const struct ws_url *u, const struct ws_handlers *h,
			   void *ud);

/* Queues one text message (from pieces).  Returns 0, ERR_CLOSED when the
 * connection is not open, or ERR_NOMEM. */
int ws_send_text(struct ws_conn *c, const char *data, size_t len);
int ws_send_textv(struct ws_conn *c, const struct iovec *iov, int iovcnt);

/* Writes what the connection has queued, as far as the socket takes it now.
 * Returns 0; a socket error closes the connection (its on_close runs). */
int ws_flush(struct ws_conn *c);

/* Starts the close handshake (status 1000).  on_close(…, 0) follows when the
 * server answers; a connection not yet open is dropped at once. */
void ws_close(struct ws_conn *c);

/*
 * Flushes queued output, waits up to timeout_us microseconds (0: don't wait,
 * negative: no limit) for socket events, handles them, and flushes again.
 * Microseconds, because a publisher at 1000 events/s must sleep less than a
 * millisecond without spinning.  Returns the number of socket events
 * handled, or ERR_IO if epoll failed.
 */
int ws_loop_poll(struct ws_loop *l, long timeout_us);

/* Connections on the loop whose on_close has not run yet. */
size_t ws_loop_live(const struct ws_loop *l);

/* X-Relay-Worker of the handshake response, or -1. */
int ws_conn_worker(const struct ws_conn *c);

/* Nonzero while the connection is open (handshake done, no close begun). */
int ws_conn_is_open(const struct ws_conn *c);

/* The errno behind an ERR_IO close, else 0. */
int ws_conn_errno(const struct ws_conn *c);

/* Bytes queued but not yet written to the socket. */
size_t ws_conn_pending(const struct ws_conn *c);

#endif
