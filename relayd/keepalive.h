/*
 * keepalive.h - websocket pings for idle connections (ping_interval).
 *
 * A connection that has sent nothing (no message, no pong) for
 * ping_interval seconds is sent a ping.  One still silent a second
 * interval after the ping is closed as gone.
 * A proxy in front, such as nginx with its 60 s proxy_read_timeout, then
 * sees traffic on every idle connection.  The check rides the service
 * tick's one pass over the connections, not a timer per connection; its
 * state fits in padding of struct conn.  Pings are written by
 * send_writable() ahead of any queued frames, within the same raw write,
 * so a ping never splits a frame.  A ping carries one byte, since
 * libwebsockets does not report an empty pong to the callback.
 *
 * Threading: service thread only.
 */
#ifndef RELAYD_KEEPALIVE_H
#define RELAYD_KEEPALIVE_H

#include <stdbool.h>
#include <stdint.h>

struct conn;
struct relayd;

enum keepalive_action { KEEPALIVE_NONE, KEEPALIVE_PING, KEEPALIVE_CLOSE };

/* What a connection last heard from at heard_s (keepalive clock, seconds,
 * wrapping at 2^16) is due at now_s, with a ping unanswered or not and
 * interval seconds (1 to 3600) between pings.  Pure, for the unit tests. */
enum keepalive_action keepalive_due(uint16_t now_s, uint16_t heard_s, bool waiting,
				    uint32_t interval);

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
