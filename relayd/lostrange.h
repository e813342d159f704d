/*
 * lostrange.h - the commit ranges one subscription lost and has not got back.
 *
 * A range (after, before) stands for the commits strictly between the two:
 * their live deliveries were lost on the way from stored (relayd/replay.h).
 * A range is "asked" while a SUB_REPLAY for it waits for its answer
 * (request_id set), "unasked" while the subscription cannot take one yet:
 * it waits for its history or its resume, which may bring part of the range
 * anyway.  Keeping the ranges until they are answered is what lets a replay
 * cut off by a stored restart be asked again instead of being lost.
 *
 * While a subscription waits, the deliveries that did arrive between its
 * losses are held, not sent: so its ranges of that time join into one, and
 * once it is live the held deliveries inside an asked range are dropped
 * (lost_ranges_asked_has), since the replay brings them.  One replay asks
 * for the lot, and nothing comes twice however many losses there were.
 *
 * Pure bookkeeping, no I/O: the service thread owns it, tests drive it.
 */
#ifndef RELAYD_LOSTRANGE_H
#define RELAYD_LOSTRANGE_H

#include <stdbool.h>
#include <stdint.h>

/* Most ranges one subscription keeps.  A worker that loses deliveries
 * loses them in runs, one range per run; a subscription waiting for its
 * history joins them into one (above).  Past this many, a new range joins
 * the newest unasked one (if the deliveries between the two were sent
 * live, they then come twice); with none unasked, the loss is only counted. */
#define LOST_RANGES_MAX 64

struct lost_range {
	uint64_t after, before; /* exclusive bounds, commit seqs */
	uint32_t request_id;    /* the SUB_REPLAY asking for it; 0: not asked */
	bool held;              /* added while its subscription held its deliveries */
};

/* Zeroed is empty; allocated on the first loss. */
struct lost_ranges {
	uint32_t n, cap;
	struct lost_range *r;
};

/* Adds an unasked range, after every range added before it (commits are
 * lost in order).  An empty one (before <= after + 1) is not kept.  held:
 * the subscription holds its live deliveries now; the range then joins the
 * newest unasked one added while it held them.  False if it could not be
 * kept: out of memory, or LOST_RANGES_MAX asked ones. */
bool lost_ranges_add(struct lost_ranges *l, uint64_t after, uint64_t before, bool held);

/* True if commit seq lies inside a range asked for: its event comes with
 * that replay. */
bool lost_ranges_asked_has(const struct lost_ranges *l, uint64_t seq);

/* The subscription is live (its held deliveries were checked against the
 * asked ranges): later ranges no longer join those of the wait. */
void lost_ranges_went_live(struct lost_ranges *l);

/* Frees the ranges; l is empty again. */
void lost_ranges_free(struct lost_ranges *l);

/* The replay asked with request_id was answered (or failed): forgets it.
 * False if no range was asked with that id. */
bool lost_ranges_answered(struct lost_ranges *l, uint32_t request_id);

/* The link to stored went down: no asked range will be answered, so every
 * one becomes unasked again. */
void lost_ranges_unask(struct lost_ranges *l);

/* The commits (covered_after, covered_to] came from stored as history or a
 * resume: takes them out of every unasked range.  A range with commits on
 * both sides splits in two; if there is no room for the second part it
 * stays whole, which sends some events twice rather than losing any. */
void lost_ranges_cover(struct lost_ranges *l, uint64_t covered_after, uint64_t covered_to);

/* The first unasked range, or NULL. */
struct lost_range *lost_ranges_next_unasked(struct lost_ranges *l);

#endif
