/* evloop.c - the worker's event loop on libev (see evloop.h). */
#include "evloop.h"

#include <ev.h>
#include <stdlib.h>

#include "../common/log.h"

struct evloop {
	struct ev_loop *loop;
};

struct evloop *evloop_new(void)
{
	struct evloop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	/* NOSIGMASK: signals are blocked in every thread and taken by the
	 * signal thread's sigwait(); libev must not unblock them. */
	l->loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOSIGMASK);
	if (!l->loop) {
		log_warnx("cannot create an epoll event loop");
		free(l);
		return NULL;
	}
	return l;
}

void *evloop_native(struct evloop *l)
{
	return l->loop;
}

void evloop_run(struct evloop *l)
{
	ev_run(l->loop, 0);
}

void evloop_stop(struct evloop *l)
{
	ev_break(l->loop, EVBREAK_ALL);
}

void evloop_free(struct evloop *l)
{
	if (!l)
		return;
	ev_loop_destroy(l->loop);
	free(l);
}
