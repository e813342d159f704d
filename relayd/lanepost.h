/*
 * lanepost.h - frames an ingress lane posts for a connection.
 *
 * Each function queues its frame in the service thread's mailbox, which
 * writes it to conn_id if that connection is still open.  Any thread may
 * call them; a failed allocation drops the frame silently.  Verb handlers
 * and the lanes share these, so a verb never calls back into ingress.c.
 */
#ifndef RELAYD_LANEPOST_H
#define RELAYD_LANEPOST_H

#include <stddef.h>
#include <stdint.h>

struct relayd;

/* Queues text (len bytes, malloc'ed) for conn_id and takes it, also on
 * failure.  text may be NULL: nothing is queued. */
void lanepost_text(struct relayd *r, uint64_t conn_id, char *text, size_t len);
/* Queues ["NOTICE",message] for conn_id. */
void lanepost_notice(struct relayd *r, uint64_t conn_id, const char *message);
/* Queues ["CLOSED",sub_id,message] for conn_id. */
void lanepost_closed(struct relayd *r, uint64_t conn_id, const char *sub_id, size_t sub_len,
		     const char *message);
/* A REQ refused: closes the subscription named sub_id that the connection
 * may have open, then queues CLOSED for it.  A REQ replaces the
 * subscription of its id (NIP-01), so once the client reads CLOSED it holds
 * none of that id, and no event may come for it any more. */
void lanepost_req_refused(struct relayd *r, uint64_t conn_id, const char *sub_id, size_t sub_len,
			  const char *message);

/* Queues ["NEG-ERR",sub_id,message] for conn_id (NIP-77). */
void lanepost_neg_err(struct relayd *r, uint64_t conn_id, const char *sub_id, size_t sub_len,
		      const char *message);

#endif
