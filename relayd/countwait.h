/*
 * countwait.h - the COUNTs one connection sent to stored and has had no
 * answer to yet.
 *
 * stored answers a COUNT once, from a query thread, and keeps nothing of it
 * anywhere else: one still queued there when stored dies dies with it, and
 * the NIP-45 client would wait for an answer that never comes.  So the
 * worker notes each COUNT it sends (by request id, with its query id), and
 * when the link to stored goes down it answers the ones still noted with
 * CLOSED itself.  An answer whose COUNT is no longer noted was closed that
 * way already and is dropped: no client gets both.  The same goes for an
 * answer that never comes while the link stays up (stored drops replies to
 * a worker that stopped reading them, reply.h): each COUNT has a deadline
 * (answer_timeout_ms), and the ones past it are closed too.
 *
 * Pure bookkeeping, no I/O: the service thread owns it, tests drive it.
 */
#ifndef RELAYD_COUNTWAIT_H
#define RELAYD_COUNTWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct count_wait {
	uint32_t request_id;
	uint32_t sub_id_len;
	char *sub_id;        /* owned, NUL-terminated */
	int64_t deadline_ms; /* closed by count_waits_expire() from then on */
};

/* Zeroed is empty; allocated on the first COUNT. */
struct count_waits {
	struct count_wait *w;
	uint32_t n, cap;
};

/* Notes a COUNT sent as request_id for query id sub_id, to be answered by
 * deadline_ms.  Returns 0 or ERR_NOMEM (not noted: its answer would be
 * dropped, so close it now). */
int count_waits_add(struct count_waits *c, uint32_t request_id, const char *sub_id, size_t len,
		    int64_t deadline_ms);

/* Forgets request_id's COUNT, handing its entry (and the query id it owns)
 * to *out if out is not NULL; false if it was not noted (answered or closed
 * already). */
bool count_waits_take(struct count_waits *c, uint32_t request_id, struct count_wait *out);

/* Calls fn with the query id of every COUNT still noted, oldest first, and
 * forgets them all. */
void count_waits_drain(struct count_waits *c,
		       void (*fn)(void *arg, const char *sub_id, size_t len), void *arg);

/* Calls fn with the query id of every COUNT whose deadline is at or before
 * now_ms, in the order sent, and forgets them; returns how many. */
uint32_t count_waits_expire(struct count_waits *c, int64_t now_ms,
			    void (*fn)(void *arg, const char *sub_id, size_t len), void *arg);

/* Frees what is noted; c is empty again. */
void count_waits_free(struct count_waits *c);

#endif
