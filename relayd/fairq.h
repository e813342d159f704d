/*
 * fairq.h - a queue that serves its senders in turn.
 *
 * Items are queued per sender (a connection's slot number) and popped one
 * sender at a time, round robin: each sender's items keep their order, and
 * a sender with one item waits behind at most one item of every other
 * sender, not behind everything a flooding sender queued before it.  An
 * ingress lane uses it so that a client's cheap REQ does not wait for
 * hundreds of signature checks of another client's EVENTs (the bystander
 * figure in bench/RESULTS.md).
 *
 * Urgent items (cheap work: a REQ, a CLOSE) go first: a sender whose next
 * item is urgent is served before every sender whose next item is not, so
 * a REQ waits for the job running now, not for a round of signature
 * checks.  A sender's own items never overtake each other.
 *
 * Not thread-safe: the lane's lock guards it.  Items are the caller's; an
 * item embeds struct fairq_item.
 */
#ifndef RELAYD_FAIRQ_H
#define RELAYD_FAIRQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fairq_item {
	struct fairq_item *next;
	bool urgent;
};

struct fairq_sender;

struct fairq {
	struct fairq_sender *senders; /* indexed by slot, grown on demand */
	uint32_t nsenders;
	/* Senders with items, in turn order: [1] those whose next item is
	 * urgent, [0] the others. */
	uint32_t ring_head[2], ring_tail[2];
	size_t count; /* items queued */
};

#define FAIRQ_INIT { NULL, 0, { UINT32_MAX, UINT32_MAX }, { UINT32_MAX, UINT32_MAX }, 0 }

/* Appends item to slot's items.  Returns 0 or ERR_NOMEM (nothing queued). */
int fairq_push(struct fairq *q, uint32_t slot, struct fairq_item *item, bool urgent);
/* Removes the next item in turn, or returns NULL when empty. */
struct fairq_item *fairq_pop(struct fairq *q);
/* Frees the queue's own memory (pop every item first). */
void fairq_free(struct fairq *q);

#endif
