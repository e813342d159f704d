/*
 * replay.h - sending subscribers again the stored events their worker lost.
 *
 * When deliveries from stored are lost (relayd/gapcount.h), the stored
 * events among them are still in the database, and deliveries come in
 * commit order: every one lost between the last delivered commit (after)
 * and the next one received (before) has a commit seq strictly between the
 * two.  So each live subscription asks stored for the events matching it
 * in that range (SUB_REPLAY) and gets exactly what it missed, once.
 * Ephemeral events lost stay lost (they are only counted).  If the delivery
 * that shows the loss is ephemeral, the range ends at the next stored one.
 *
 * Each subscription keeps its ranges until they are answered
 * (relayd/lostrange.h).  One still waiting for its history or resume asks
 * when it goes live, for what that did not bring, and of the live
 * deliveries it held meanwhile sends only those no replay or history
 * brings; a replay cut off by a stored restart is asked again after the
 * resume, and the events it had already sent are skipped (sentids.h).
 *
 * A worker that keeps losing deliveries is overloaded, and a replay costs a
 * query per live subscription: a round that would leave more than
 * REPLAY_MAX_OUTSTANDING replays unanswered is not sent (its loss stays
 * counted, and logged).  Replays have request ids with REPLAY_ID_BIT set, so
 * their answers are told from a history's.  Service thread only.
 */
#ifndef RELAYD_REPLAY_H
#define RELAYD_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#define REPLAY_ID_BIT 0x40000000u
#define REPLAY_MAX_OUTSTANDING 20000

struct conn;
struct relayd;
struct sub;

struct replay;

/* The replay state of a worker (r->replay), or NULL without memory. */
struct replay *replay_new(void);
/* Frees it.  NULL-safe. */
void replay_free(struct replay *rp);
/* A subscription's sent-id list is full (SENT_IDS_MAX): counts it.
 * Returns true the first time, so the caller logs it once. */
bool replay_sent_full(struct relayd *r);

/* Takes the outcome of one DELIVER: lost deliveries just before it (gapcount),
 * its commit seq (0: ephemeral), and the newest commit delivered before it. */
void replay_note(struct relayd *r, uint64_t lost, uint64_t commit_seq, uint64_t prev_commit_seq);

/* True for the request id of a replay (and of stored's answers to one). */
bool replay_is_id(uint32_t request_id);
/* A replay was answered to the end (QUERY_LAST or QUERY_DONE), for s if
 * that subscription is still there (else NULL). */
void replay_answered(struct relayd *r, struct sub *s, uint32_t request_id);
/* A delivery to s was dropped because s held held_deliveries already while
 * waiting for its history (commit_seq 0: ephemeral, lost for good).  Held
 * stays full until the history is done, so every delivery to s from the
 * first dropped to the last was dropped: one range, asked once s is live. */
void replay_held_dropped(struct relayd *r, struct sub *s, uint64_t commit_seq);
/* s has its history or resume, the commits (covered_after, covered_to], and
 * is live: asks for the rest of what it lost meanwhile, and drops from its
 * held deliveries the events that brings or the history brought (call it
 * before sending them). */
void replay_went_live(struct relayd *r, struct conn *c, struct sub *s, uint64_t covered_after,
		      uint64_t covered_to);
/* The link to stored came up again: what was asked before will not be
 * answered, so every range is unasked again (asked after the resume), and
 * restoring the subscriptions asks for what they missed meanwhile; the
 * stored events each was sent meanwhile are not sent again (sentids.h). */
void replay_reset(struct relayd *r);

#endif
