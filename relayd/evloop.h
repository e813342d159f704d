/*
 * evloop.h - the worker's event loop: libev over epoll, with libwebsockets
 * on it as a "foreign" loop.
 *
 * Everything happens on the thread that runs evloop_run() (the service
 * thread), except lws_cancel_service(), which other threads use to wake it.
 * libwebsockets' own loop calls poll() over every descriptor each time it
 * wakes, and a worker wakes for every mailbox post and every delivery;
 * epoll costs by what is ready, not by what is open (bench/RESULTS.md
 * item 25).  libwebsockets drives libev through its event-library plugin
 * (a dependency of its Debian package); the worker owns the loop so it can
 * stop it.
 */
#ifndef RELAYD_EVLOOP_H
#define RELAYD_EVLOOP_H

struct evloop;

/* A new loop on epoll, or NULL (logged). */
struct evloop *evloop_new(void);

/* The pointer to give libwebsockets as its foreign loop. */
void *evloop_native(struct evloop *l);

/* Runs until evloop_stop(); returns then. */
void evloop_run(struct evloop *l);

/* Makes evloop_run() return once the current callback is done.  Only from
 * a callback on the loop's own thread. */
void evloop_stop(struct evloop *l);

/* Frees the loop after libwebsockets has let go of it.  NULL-safe. */
void evloop_free(struct evloop *l);

#endif
