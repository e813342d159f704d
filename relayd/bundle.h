/*
 * bundle.h - a lane's verified events waiting to go to stored together.
 *
 * An ingress lane verifying a run of EVENTs collects their EVENT_STORE
 * requests here and sends them as one BUNDLE (proto/msg.h) when the run
 * ends: when the lane has nothing more queued, before it handles any other
 * verb (so the order of a lane's requests to stored is the order it handled
 * them), when the bundle is full, or when its first event has waited
 * BUNDLE_MAX_WAIT_US (so stored can start committing the first events of a
 * long run while the lane still verifies the rest).  An idle lane therefore
 * adds no delay, and a busy one makes one nng hand-off per few events
 * instead of one per event.  The service thread learns of the events it
 * must answer (MAIL_EVENT_PENDING) in the same batch, posted together just
 * before the send, so the service thread is woken once per bundle.
 * Not thread-safe: each lane owns its bundle.
 */
#ifndef RELAYD_BUNDLE_H
#define RELAYD_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/event.h"
#include "../proto/msg.h"
#include "mailbox.h"

struct relayd;

/* Encoded bytes a bundle may carry: well under what stored accepts in one
 * message (at least 1 MiB). */
#define BUNDLE_MAX_BYTES (512 * 1024)
/* The longest an event waits in a bundle for others. */
#define BUNDLE_MAX_WAIT_US 300

struct store_bundle {
	struct buf parts[MSG_BUNDLE_MAX]; /* complete EVENT_STORE messages */
	uint64_t conn_id[MSG_BUNDLE_MAX];
	uint32_t request_id[MSG_BUNDLE_MAX];
	uint8_t event_id[MSG_BUNDLE_MAX][EVENT_ID_LEN];
	uint32_t count;
	size_t bytes;
	int64_t first_us; /* when the first event was added (monotonic) */
	struct mail_list pending; /* MAIL_EVENT_PENDING for each part */
};

/*
 * Adds an encoded EVENT_STORE (msg is taken over and left empty), sending
 * what the bundle held first if msg would not fit.  The service thread is
 * told the event is pending when the bundle is sent, before stored can
 * answer.  A failed send answers each event it carried through the mailbox
 * (MAIL_EVENT_FAILED).
 */
void bundle_add(struct relayd *r, struct store_bundle *b, struct buf *msg, uint64_t conn_id,
		uint32_t request_id, const uint8_t event_id[EVENT_ID_LEN]);

/* Sends what the bundle holds (one plain request if it holds one) and
 * empties it.  No-op when empty. */
void bundle_flush(struct relayd *r, struct store_bundle *b);
/* The same once the first event has waited BUNDLE_MAX_WAIT_US.  The lane
 * calls it after every job, not only when another event joins: a run of
 * messages that never reach the bundle (EVENTs with bad signatures, say)
 * must not hold a valid one back for as long as they keep coming. */
void bundle_flush_if_due(struct relayd *r, struct store_bundle *b);

#endif
