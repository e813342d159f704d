/* listen.c - SO_REUSEPORT listening socket adopted into lws (see listen.h). */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/log.h"
#include "wsguard.h"

/* Connections accepted per readiness callback, so a connection storm cannot
 * hold the service thread for long; the rest wait for the next turn. */
#define LISTEN_ACCEPT_BURST 64

static int listen_address(const char *address, unsigned port, struct sockaddr_storage *ss,
			  socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, address, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, address, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	errno = EINVAL;
	return -1;
}

int listen_open(const char *address, unsigned port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	if (listen_address(address, port, &ss, &len))
		return -1;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len)) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int listen_adopt(struct lws_vhost *vh, int fd, const char *protocol)
{
	lws_sock_file_fd_type desc;

	if (listen(fd, 1024))
		return -1;
	desc.filefd = fd;
	return lws_adopt_descriptor_vhost(vh, LWS_ADOPT_RAW_FILE_DESC, desc, protocol, NULL) ? 0 : -1;
}

int listen_on_ready(struct lws_vhost *vh, int fd)
{
	int one = 1;

	for (int i = 0; i < LISTEN_ACCEPT_BURST; i++) {
		int conn = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (conn < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_warn("accept");
			return 0;
		}
		/* Replies are many small frames (EVENTs, then EOSE; OKs): without
		 * TCP_NODELAY, Nagle holds the last one back for the peer's
		 * delayed ACK, about 40 ms.  lws sets it only on sockets it accepts
		 * itself. */
		setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		wsguard_follow(conn); /* libwebsockets 4.1.6 takes unmasked frames */
		if (!lws_adopt_socket_vhost(vh, conn))
			close(conn); /* lws logged why; the client sees a reset */
	}
	return 0;
}
