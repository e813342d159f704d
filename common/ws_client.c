/*
 * ws_client.c - client websocket connections on an epoll loop (see
 * ws_client.h): sockets, the loop, output buffers, and each connection's
 * lifecycle.  What received bytes mean is ws_recv.c's business.
 */
#include "ws_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "ws_conn_int.h"
#include "ws_frame.h"

#define WS_READ_ROOM 16384 /* free space ensured before each read */
#define WS_EVENTS 256      /* socket events taken per epoll_wait */

int ws_url_parse(const char *text, struct ws_url *out)
{
	char host[64];
	unsigned port;
	int used = 0;

	memset(out, 0, sizeof(*out));
	if (sscanf(text, "ws://%63[^:/]:%u%n", host, &port, &used) != 2 || port == 0 ||
	    port > 65535)
		return ERR_INVAL;
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	out->addr.sin_family = AF_INET;
	out->addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &out->addr.sin_addr) != 1 ||
	    (ntohl(out->addr.sin_addr.s_addr) >> 24) != 127)
		return ERR_INVAL;
	snprintf(out->host, sizeof(out->host), "%s", host);
	out->port = (uint16_t)port;
	snprintf(out->path, sizeof(out->path), "%s", text[used] ? text + used : "/");
	return out->path[0] == '/' ? 0 : ERR_INVAL;
}

struct ws_loop *ws_loop_new(size_t max_message)
{
	struct ws_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	l->max_message = max_message;
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		l->mask_state = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
				((uint64_t)getpid() << 32) ^ (uintptr_t)l;
	}
	return l;
}

int ws_loop_offer_deflate(struct ws_loop *l)
{
	if (!l->z)
		l->z = ws_z_new();
	return l->z ? 0 : ERR_NOMEM;
}

uint64_t ws_loop_bytes_in(const struct ws_loop *l)
{
	return l->bytes_in;
}

uint64_t ws_loop_bytes_out(const struct ws_loop *l)
{
	return l->bytes_out;
}

static void ws_conn_free(struct ws_conn *c)
{
	buf_free(&c->in);
	buf_free(&c->out);
	buf_free(&c->msg);
	free(c);
}

static void ws_free_dead(struct ws_loop *l)
{
	while (l->dead) {
		struct ws_conn *c = l->dead;

		l->dead = c->next;
		ws_conn_free(c);
	}
}

void ws_loop_free(struct ws_loop *l)
{
	if (!l)
		return;
	while (l->all) {
		struct ws_conn *c = l->all;

		l->all = c->next;
		close(c->fd);
		ws_conn_free(c);
	}
	ws_free_dead(l);
	close(l->epfd);
	ws_z_free(l->z);
	buf_free(&l->zbuf);
	free(l);
}

static int ws_socket(const struct ws_url *u)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)&u->addr, sizeof(u->addr)) && errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Links a fresh conn on fd into the loop with the handshake request queued. */
static struct ws_conn *ws_conn_new(struct ws_loop *l, int fd, const struct ws_url *u,
				   const struct ws_handlers *h, void *ud)
{
	struct ws_conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev = { EPOLLIN | EPOLLOUT, { .ptr = c } };

	if (!c)
		return NULL;
	c->loop = l;
	c->fd = fd;
	c->state = WS_CONNECTING;
	c->want_out = true;
	c->worker = -1;
	c->h = h;
	c->ud = ud;
	c->msg_op = -1;
	if (ws_handshake_key(c->key) ||
	    ws_handshake_request(&c->out, u->host, u->port, u->path, c->key, l->z != NULL) ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ws_conn_free(c);
		return NULL;
	}
	c->next = l->all;
	if (l->all)
		l->all->prev = c;
	l->all = c;
	l->live++;
	return c;
}

struct ws_conn *ws_connect(struct ws_loop *l, const struct ws_url *u, const struct ws_handlers *h,
			   void *ud)
{
	int fd = ws_socket(u);
	struct ws_conn *c;

	if (fd < 0)
		return NULL;
	c = ws_conn_new(l, fd, u, h, ud);
	if (!c) {
		int e = errno;

		close(fd);
		errno = e ? e : ENOMEM;
	}
	return c;
}

int ws_send_textv(struct ws_conn *c, const struct iovec *iov, int iovcnt)
{
	struct ws_loop *l = c->loop;
	struct iovec z;

	if (c->state != WS_OPEN)
		return ERR_CLOSED;
	if (!c->deflate)
		return ws__queue(c, WS_OP_TEXT, iov, iovcnt);
	if (ws_z_deflate(l->z, iov, iovcnt, &l->zbuf))
		return ERR_NOMEM;
	z.iov_base = l->zbuf.data;
	z.iov_len = l->zbuf.len;
	return ws__queue(c, WS_OP_TEXT | WS_RSV1, &z, 1);
}

int ws_send_text(struct ws_conn *c, const char *data, size_t len)
{
	struct iovec iov = { (void *)data, len };

	return ws_send_textv(c, &iov, 1);
}

void ws_close(struct ws_conn *c)
{
	static const uint8_t normal[2] = { 0x03, 0xe8 }; /* 1000 */
	struct iovec iov = { (void *)normal, 2 };

	if (c->state == WS_OPEN) {
		ws__queue(c, WS_OP_CLOSE, &iov, 1);
		c->state = WS_CLOSING;
		ws_flush(c);
	} else if (c->state == WS_CONNECTING || c->state == WS_HANDSHAKE) {
		ws__teardown(c, 0);
	}
}

/* The TCP connect finished (EPOLLOUT while connecting). */
static void ws_on_connected(struct ws_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		ws__fail_io(c, err ? err : errno);
		return;
	}
	c->state = WS_HANDSHAKE;
	ws_flush(c);
}

static void ws_on_readable(struct ws_conn *c)
{
	ssize_t n;

	if (buf_reserve(&c->in, WS_READ_ROOM)) {
		ws__teardown(c, ERR_NOMEM);
		return;
	}
	n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len - 1, 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n < 0) {
		ws__fail_io(c, errno);
		return;
	}
	if (n == 0) {
		ws__teardown(c, c->state == WS_CLOSING ? 0 : ERR_CLOSED);
		return;
	}
	c->in.len += (size_t)n;
	c->in.data[c->in.len] = '\0';
	c->loop->bytes_in += (size_t)n;
	ws__recv(c);
}

static void ws_on_event(struct ws_conn *c, uint32_t events)
{
	if (c->state == WS_DEAD)
		return;
	if (c->state == WS_CONNECTING && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		ws_on_connected(c);
		if (c->state == WS_DEAD)
			return;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		ws_on_readable(c);
	if (c->state != WS_DEAD && (events & EPOLLOUT))
		ws_flush(c);
}

/* Writes every connection that has queued output. */
static void ws_flush_dirty(struct ws_loop *l)
{
	while (l->dirty) {
		struct ws_conn *c = l->dirty;

		l->dirty = c->next_dirty;
		c->dirty = false;
		ws_flush(c);
	}
}

int ws_loop_poll(struct ws_loop *l, long timeout_us)
{
	struct epoll_event evs[WS_EVENTS];
	struct timespec ts = { timeout_us / 1000000, (timeout_us % 1000000) * 1000 };
	int n;

	ws_flush_dirty(l);
	n = epoll_pwait2(l->epfd, evs, WS_EVENTS, timeout_us < 0 ? NULL : &ts, NULL);
	if (n < 0)
		return errno == EINTR ? 0 : ERR_IO;
	for (int i = 0; i < n; i++)
		ws_on_event(evs[i].data.ptr, evs[i].events);
	ws_flush_dirty(l);
	ws_free_dead(l);
	return n;
}

size_t ws_loop_live(const struct ws_loop *l)
{
	return l->live;
}

int ws_conn_worker(const struct ws_conn *c)
{
	return c->worker;
}

int ws_conn_is_open(const struct ws_conn *c)
{
	return c->state == WS_OPEN;
}

int ws_conn_errno(const struct ws_conn *c)
{
	return c->sys_errno;
}

size_t ws_conn_pending(const struct ws_conn *c)
{
	return c->out.len - c->out_off;
}
