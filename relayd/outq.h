/*
 * outq.h - a connection's bounded queue of outgoing websocket messages.
 *
 * An item is a head (owned text), an optional shared body, and an optional
 * one-byte tail: a live delivery is `["EVENT","sub",` + the event's JSON,
 * shared by every recipient, + `]`.  So fan-out keeps one copy of each
 * event.  Only the service thread uses queues and shared bodies (the
 * reference count is not atomic on purpose).
 */
#ifndef RELAYD_OUTQ_H
#define RELAYD_OUTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One event's JSON, shared by all its deliveries. */
struct shared {
	uint32_t refs;
	uint32_t len;
	int64_t expiration; /* NIP-40 unix seconds, 0: none (shared_new sets 0) */
	uint64_t commit_seq; /* a live delivery's commit seq, 0: none or ephemeral */
	/* data and ztail deflated once for every permessage-deflate recipient
	 * (send.c): zstate 0 not tried yet, 1 z holds zlen bytes, 2 not
	 * worth it (the compressed form is not shorter). */
	unsigned char *z;
	uint32_t zlen;
	char ztail;
	uint8_t zstate;
	char data[];
};

/* Copies len bytes into a new shared body with one reference, or NULL. */
struct shared *shared_new(const char *data, size_t len);
/* Drops a reference; frees at zero.  NULL-safe. */
void shared_unref(struct shared *s);

struct out_item {
	struct out_item *next;
	char *head;             /* owned */
	uint32_t head_len;
	struct shared *body;    /* one reference owned, or NULL */
	char tail;              /* appended after body when not '\0' */
};

struct outq {
	struct out_item *first, *last;
	size_t bytes;   /* sum of item sizes queued */
	size_t count;
};

/* Bytes item will occupy on the wire. */
size_t out_item_size(const struct out_item *item);

/* Appends an item owning head (and a reference to body, which the caller
 * gives up).  Returns 0, or ERR_NOMEM (then head and the body reference are
 * released). */
int outq_push(struct outq *q, char *head, size_t head_len, struct shared *body, char tail);
/* Removes and returns the oldest item, or NULL. */
struct out_item *outq_pop(struct outq *q);
/* Frees one item. */
void out_item_free(struct out_item *item);
/* Frees every item. */
void outq_clear(struct outq *q);
/* Moves every item of from to the end of to. */
void outq_splice(struct outq *to, struct outq *from);
/* Frees the items for which drop(item, arg) is true, keeping the others in
 * order.  Returns how many went. */
size_t outq_drop_if(struct outq *q, bool (*drop)(const struct out_item *item, void *arg), void *arg);
/* Frees the items whose body expired (NIP-40) at or before now. */
size_t outq_drop_expired(struct outq *q, int64_t now);

#endif
