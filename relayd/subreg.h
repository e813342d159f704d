/*
 * subreg.h - a subscription's registration at stored (service thread).
 *
 * SUB_OPEN files a subscription in stored's index and asks for its history
 * or resume; SUB_CLOSE unfiles it.  The service thread and answer.c both
 * send them, so they live here rather than in either.
 */
#ifndef RELAYD_SUBREG_H
#define RELAYD_SUBREG_H

#include <stdbool.h>
#include <stdint.h>

struct relayd;
struct conn;
struct sub;

/* Sends SUB_OPEN for s of c: with its history while s is SUB_QUERYING,
 * otherwise as a resume replaying commits after resume_after.  restoring:
 * s is one stored lost in a restart (link_send_control), else a client's
 * REQ (link_send, which may refuse it).  Sets s->resume_after and s's
 * answer deadline, and c->registered on success.  Returns 0, -1 when the
 * encoding fails, or the send's error. */
int subreg_open(struct relayd *r, struct conn *c, struct sub *s, uint64_t resume_after,
		bool restoring);
/* Sets s's answer deadline to answer_timeout_ms from now.  Called when its
 * history or resume is asked for and as each part of it arrives. */
void subreg_answer_due(struct relayd *r, struct sub *s);
/* Sends SUB_CLOSE for s of c, so stored stops delivering to it.  It goes
 * on the control path (link_send_control); when that fails, mostly while
 * the link is down, the message is dropped. */
void subreg_close(struct relayd *r, struct conn *c, struct sub *s);

#endif
