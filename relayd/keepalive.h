/*
 * keepalive.h - websocket pings for idle connections (ping_interval).
 *
 * A connection that has sent nothing (no message, no pong) for
 * ping_interval seconds is sent a ping.  One still silent a second
 * interval after the ping is closed as gone.  A ping carries one byte,
 * since libwebsockets does not report an empty pong.  A proxy in front, such as nginx with
 * its 60 s proxy_read_timeout, then sees traffic on every idle connection.
 * The check is one pass over the connections per service tick, not a
 * timer per connection; its state fits in padding of struct conn.
 * Pings are written by send_writable() ahead of any queued frames.
 *
 * Threading: service thread only.
 */
#ifndef RELAYD_KEEPALIVE_H
#define RELAYD_KEEPALIVE_H

struct conn;
struct relayd;

/* Advances the keepalive clock; call once per service tick before
 * keepalive_check(). */
void keepalive_tick(struct relayd *r);
/* c sent something (a message, a fragment or a pong): it is alive. */
void keepalive_heard(struct relayd *r, struct conn *c);
/* Pings c if it has been idle ping_interval seconds, or closes it if it
 * has sent nothing in the interval after its ping.  Does nothing when
 * ping_interval is 0. */
void keepalive_check(struct relayd *r, struct conn *c);

#endif
