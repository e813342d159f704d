/*
 * ws_conn.c - one client connection's output and its end: queueing masked
 * frames, writing them, and tearing the connection down (see
 * ws_conn_int.h).  ws_client.c (sockets, the loop) and ws_recv.c (what
 * arrives) both use it, and it uses neither.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "ws_conn_int.h"
#include "ws_frame.h"

/* Unlinks c from the loop's list of all connections. */
static void ws_unlink(struct ws_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		c->loop->all = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

void ws__teardown(struct ws_conn *c, int err)
{
	struct ws_loop *l = c->loop;

	if (c->state == WS_DEAD)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->state = WS_DEAD;
	l->live--;
	ws_unlink(c);
	c->next = l->dead;
	l->dead = c;
	if (c->h->on_close)
		c->h->on_close(c, err, c->ud);
}

void ws__fail_io(struct ws_conn *c, int e)
{
	c->sys_errno = e;
	ws__teardown(c, ERR_IO);
}

void ws__mark_dirty(struct ws_conn *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->next_dirty = c->loop->dirty;
	c->loop->dirty = c;
}

/* The next mask key (RFC 6455 wants them unpredictable to the network
 * path, not secret: splitmix64 over a clock-seeded state does). */
static uint32_t ws_mask_key(struct ws_loop *l)
{
	uint64_t z = (l->mask_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

int ws__queue(struct ws_conn *c, int opcode, const struct iovec *iov, int iovcnt)
{
	uint32_t mask = ws_mask_key(c->loop);

	if (ws_frame_appendv(&c->out, (enum ws_opcode)opcode, true, iov, iovcnt, mask))
		return ERR_NOMEM;
	ws__mark_dirty(c);
	return 0;
}

/* Registers or drops interest in EPOLLOUT. */
static void ws_want_out(struct ws_conn *c, bool want)
{
	struct epoll_event ev = { EPOLLIN | (want ? EPOLLOUT : 0), { .ptr = c } };

	if (c->want_out == want)
		return;
	c->want_out = want;
	epoll_ctl(c->loop->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

int ws_flush(struct ws_conn *c)
{
	/* Until connected, the socket is not writable; EPOLLOUT says when. */
	if (c->state == WS_DEAD || c->state == WS_CONNECTING)
		return 0;
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ws_want_out(c, true);
			return 0;
		}
		if (n < 0) {
			ws__fail_io(c, errno);
			return 0;
		}
		c->out_off += (size_t)n;
		c->loop->bytes_out += (size_t)n;
	}
	buf_reset(&c->out);
	c->out_off = 0;
	ws_want_out(c, false);
	return 0;
}
