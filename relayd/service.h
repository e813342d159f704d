/*
 * service.h - what the service thread does besides websocket I/O.
 *
 * service_drain() handles every mail posted since the last call: frames to
 * queue, subscriptions to open or close (with the per-connection limit),
 * events waiting for stored, stored's replies and deliveries (answer.h),
 * and the link to stored coming and going.  When stored comes back, every
 * live subscription is registered again, so clients keep receiving without
 * doing anything.
 */
#ifndef RELAYD_SERVICE_H
#define RELAYD_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

struct relayd;
struct conn;
struct sub;

/* Handles all mail queued so far. */
void service_drain(struct relayd *r);
/* Once a second: answers error: to the EVENTs stored did not answer within
 * store_timeout_ms and to the COUNTs, histories and resumes it sent nothing
 * for within answer_timeout_ms, and sends this worker's counters to
 * stored. */
void service_tick(struct relayd *r);
/* A connection closed: tell stored and forget it. */
void service_conn_gone(struct relayd *r, struct conn *c);
/* Sends SUB_OPEN for sub: with its history while it is SUB_QUERYING,
 * otherwise as a resume replaying commits after resume_after.  restoring:
 * stored restarted and lost it (link_send_control), else a client's REQ
 * (link_send).  Returns 0 or the send's error. */
int service_sub_register(struct relayd *r, struct conn *c, struct sub *s, uint64_t resume_after,
			 bool restoring);
/* stored's next part of s's history or resume is due within
 * answer_timeout_ms from now: called when it is asked for and as each part
 * arrives. */
void service_sub_answer_due(struct relayd *r, struct sub *s);
/* Tells stored that s no longer wants deliveries (SUB_CLOSE). */
void service_sub_close_remote(struct relayd *r, struct conn *c, struct sub *s);
/* Hands nng what waits in the link's backlog, and keeps a short timer
 * running while something still waits (MAIL_PUMP). */
void service_pump(struct relayd *r);
/* Milliseconds / microseconds on a monotonic clock. */
int64_t service_now_ms(void);
int64_t service_now_us(void);

#endif
