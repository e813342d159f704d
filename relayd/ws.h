/*
 * ws.h - the libwebsockets side of a worker: context creation and the one
 * protocol callback, which only routes each reason to a small ws_on_*
 * handler (or to http.c for plain HTTP).
 */
#ifndef RELAYD_WS_H
#define RELAYD_WS_H

struct relayd;
struct lws_context;

/* Binds cfg.bind:cfg.port with SO_REUSEPORT and creates the lws context
 * with r as its user data.  NULL on failure (logged). */
struct lws_context *ws_create(struct relayd *r);

#endif
