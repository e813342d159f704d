/*
 * fairq.h - a queue that serves its senders in turn, to one or two servers.
 *
 * Items are queued per sender (a connection's slot number) and popped one
 * sender at a time, round robin: each sender's items keep their order, and
 * a sender with one item waits behind at most one item of every other
 * sender, not behind everything a flooding sender queued before it.  An
 * ingress lane uses it so that a client's cheap REQ does not wait for
 * hundreds of signature checks of another client's EVENTs.
 *
 * Urgent items (cheap work: a REQ, a CLOSE) go first: a sender whose next
 * item is urgent is served before every sender whose next item is not, so
 * a REQ waits for the job running now, not for a round of signature
 * checks.  A sender's own items never overtake each other.
 *
 * Two servers may take items, and never the same sender's at once (so one
 * connection's messages are still handled in order):
 *   - the primary (fairq_pop) takes anything.  A sender it took from is
 *     held by it until fairq_release(): the primary may still hold that
 *     sender's work (an EVENT verified but not yet sent to stored);
 *   - the express server (fairq_pop_express) takes only urgent items, of
 *     senders the primary does not hold, one sender at a time: the sender
 *     leaves the turn order until fairq_express_done().
 * A lane whose primary is busy checking signatures thus answers a quiet
 * client's REQ on its express thread, which the kernel wakes at once
 * because it rarely runs.
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
	/* Senders with items that a server may take, in turn order: [1]
	 * those whose next item is urgent, [0] the others. */
	uint32_t ring_head[2], ring_tail[2];
	size_t count;          /* items queued */
	uint64_t hold_epoch;   /* senders the primary took in this epoch are held */
};

#define FAIRQ_INIT { NULL, 0, { UINT32_MAX, UINT32_MAX }, { UINT32_MAX, UINT32_MAX }, 0, 1 }

/* Appends item to slot's items.  Returns 0 or ERR_NOMEM (nothing queued). */
int fairq_push(struct fairq *q, uint32_t slot, struct fairq_item *item, bool urgent);
/* The primary's pop: the next item in turn, or NULL when no sender has one
 * it may take.  Its sender is held until fairq_release(). */
struct fairq_item *fairq_pop(struct fairq *q);
/* The primary has nothing of anyone's left in hand: every sender it held
 * may go to the express server again. */
void fairq_release(struct fairq *q);
/* The express server's pop: the first urgent item in turn whose sender the
 * primary does not hold, or NULL.  *slot gets its sender, which no server
 * may take from until fairq_express_done(q, *slot). */
struct fairq_item *fairq_pop_express(struct fairq *q, uint32_t *slot);
/* The express server finished slot's item: the sender rejoins the turn
 * order (at the back) if it has more. */
void fairq_express_done(struct fairq *q, uint32_t slot);
/* Whether fairq_pop_express() would return an item now. */
bool fairq_express_ready(const struct fairq *q);
/* Whether slot has nothing queued and no server handling or holding any of
 * its items: everything it sent before has been handled in full, so its
 * next message may be handled by its sender's own thread without
 * overtaking one of them. */
bool fairq_sender_idle(const struct fairq *q, uint32_t slot);
/* Items slot has queued (0 for a slot never seen). */
uint32_t fairq_pending(const struct fairq *q, uint32_t slot);
/* The last item slot queued, or NULL when it has none queued. */
struct fairq_item *fairq_last(const struct fairq *q, uint32_t slot);
/* Frees the queue's own memory (pop every item first). */
void fairq_free(struct fairq *q);

#endif
