/*
 * mailbox.h - everything other threads hand to the service thread.
 *
 * Any thread posts; only the service thread drains (from the
 * LWS_CALLBACK_EVENT_WAIT_CANCELLED callback).  Posting wakes the service
 * thread with lws_cancel_service(), the one libwebsockets call other
 * threads may make.
 * Order is FIFO across all posters, which the worker relies on: an ingress
 * thread posts "event pending" before it sends the event to stored, so the
 * pending entry is always known before stored's answer is drained (and
 * so for a COUNT).
 */
#ifndef RELAYD_MAILBOX_H
#define RELAYD_MAILBOX_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/event.h"
#include "../common/filter.h"

enum mail_kind {
	MAIL_TEXT,          /* send text (a complete frame) to conn_id */
	MAIL_SUB_OPEN,      /* REQ parsed: open or replace sub_id with filters */
	MAIL_SUB_CLOSE,     /* CLOSE parsed */
	MAIL_EVENT_PENDING, /* event sent to stored as request_id */
	MAIL_EVENT_FAILED,  /* sending request_id failed: answer error now */
	MAIL_COUNT_PENDING, /* COUNT sub_id sent to stored as request_id */
	MAIL_COUNT_FAILED,  /* sending COUNT request_id failed: close it now */
	MAIL_RPC,           /* a reply from stored (msg) */
	MAIL_DELIVER,       /* a DELIVER from stored (msg) */
	MAIL_LINK_UP,       /* a pipe to stored appeared */
	MAIL_LINK_DOWN,     /* the pipe to stored went away */
	MAIL_RELOAD,        /* SIGHUP: read the config file again */
	MAIL_RESUME,        /* conn_id's slot has room in its lane again: read from
			     * the connection in that slot (any generation) */
	MAIL_PUMP,          /* the link's backlog began to hold requests (backlog.h) */
	MAIL_AUTHED,        /* conn_id authenticated as viewers[0]: its open
			     * subscriptions may read more */
};

struct mail {
	struct mail *next;
	enum mail_kind kind;
	uint64_t conn_id;
	uint32_t request_id;
	uint8_t event_id[EVENT_ID_LEN];
	char *text;             /* MAIL_TEXT: owned */
	size_t text_len;
	char sub_id[257];       /* MAIL_SUB_*, MAIL_COUNT_PENDING: NUL-terminated,
				 * sub_id_len bytes */
	uint32_t sub_id_len;
	struct filter *filters; /* MAIL_SUB_OPEN: owned */
	uint32_t nfilters;
	bool restricted;        /* MAIL_SUB_OPEN: may reach private kinds (private.h) */
	uint32_t nviewers;      /* MAIL_SUB_OPEN: the connection's AUTH pubkeys;
				 * MAIL_AUTHED: the one it added */
	uint8_t viewers[8][32];
	nng_msg *msg;           /* MAIL_RPC, MAIL_DELIVER: owned */
};

struct mailbox;
struct lws_context;

/* Creates a mailbox that wakes lws when posted to; NULL without memory. */
struct mailbox *mailbox_new(struct lws_context *lws);
/* Frees the mailbox and any mail still in it.  NULL-safe. */
void mailbox_free(struct mailbox *mb);
/* Allocates a zeroed mail of kind; NULL without memory. */
struct mail *mail_new(enum mail_kind kind, uint64_t conn_id);
/* Frees a mail and what it owns.  NULL-safe. */
void mail_free(struct mail *m);
/* Appends m (taking it) and wakes the service thread. */
void mailbox_post(struct mailbox *mb, struct mail *m);
/* Mail gathered for one post (a lane's bundle of pending events); zeroed is
 * empty. */
struct mail_list {
	struct mail *head, *tail;
};
/* Appends m (taking it) to list; NULL m is ignored (a mail that could not be
 * allocated is lost, as it always is). */
void mail_list_append(struct mail_list *list, struct mail *m);
/* Appends everything in list (taken; list is left empty) with one lock and
 * at most one wake-up.  No-op when list is empty. */
void mailbox_post_list(struct mailbox *mb, struct mail_list *list);
/* A mail for one event (MAIL_EVENT_PENDING or MAIL_EVENT_FAILED), not yet
 * posted; NULL without memory. */
struct mail *mail_new_event(enum mail_kind kind, uint64_t conn_id, uint32_t request_id,
			    const uint8_t event_id[EVENT_ID_LEN]);
/* Takes every mail posted so far, oldest first, as a list (service thread). */
struct mail *mailbox_drain(struct mailbox *mb);

#endif
