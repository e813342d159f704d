/*
 * conn.h - the service thread's table of websocket connections.
 *
 * A connection is named across threads and processes by a conn_id: its slot
 * in the table in the low 32 bits and the slot's generation in the high 32.
 * A slot reused by a new connection gets a new generation, so a late reply
 * for a closed connection finds nothing (conn_find returns NULL) and is
 * dropped.  Each connection owns its receive buffer, its outgoing queue, its
 * subscriptions and the events it is waiting for stored to answer.
 *
 * Threading: service thread only.
 */
#ifndef RELAYD_CONN_H
#define RELAYD_CONN_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../common/filter.h"
#include "countwait.h"
#include "lostrange.h"
#include "outq.h"
#include "sentids.h"

enum sub_state {
	SUB_QUERYING, /* stored events are coming; EOSE not sent yet */
	SUB_RESUMING, /* re-registered after stored came back; missed events are
			 being replayed (no second EOSE) */
	SUB_LIVE,     /* deliveries go straight out */
};

struct sub {
	char id[257];         /* NUL-terminated; id_len bytes */
	uint32_t id_len;
	uint32_t serial;      /* this worker's number for it; deliveries echo it */
	enum sub_state state;
	uint64_t floor_seq;   /* commit seq it was registered at (QUERY_DONE) */
	uint64_t resume_after; /* SUB_RESUMING: its resume brings commits after this */
	int64_t answer_deadline_ms; /* not SUB_LIVE: closed if stored sends nothing
				       more for it by then (subreg.h) */
	struct filter *filters; /* kept to re-register after stored restarts */
	uint32_t nfilters;
	struct outq held;     /* deliveries that arrived while not SUB_LIVE */
	struct lost_ranges lost; /* lost deliveries not yet sent again (replay.h) */
	struct sent_ids sent; /* stored events sent while an answer is unfinished */
	uint64_t held_dropped_first, held_dropped_last; /* stored events dropped with held
							   full (0: none) */
	bool restricted;      /* may reach private kinds: check each event */
	uint32_t nviewers;    /* pubkeys that may read private kinds here */
	uint8_t viewers[8][32];
};

/* Where a deflate connection's incoming message is (wsext.h). */
enum zin_state {
	ZIN_IDLE,     /* between messages */
	ZIN_PLAIN,    /* in one sent uncompressed */
	ZIN_DEFLATED, /* in a compressed one, collected in zrx */
	ZIN_DROP,     /* refused: the rest is dropped */
};

struct pending_event {
	uint32_t request_id;
	uint8_t id[32];
	int64_t deadline_ms;
	int64_t started_us; /* when the EVENT was handed to stored (for latency) */
};

struct conn {
	uint64_t id;
	struct lws *wsi;
	char ip[64];
	struct buf rx;       /* the message being reassembled from fragments */
	bool deflate;        /* permessage-deflate negotiated (wsext.h) */
	uint8_t zin;         /* where its current message is (enum zin_state) */
	bool zin_midframe;   /* the last chunk lws passed did not end its frame */
	struct buf zrx;      /* the compressed frames of that message (wsext.h) */
	bool rx_paused;      /* not read until its lane has room (MAIL_RESUME) */
	bool ip_counted;     /* iplimit counted it (iplimit_connect) */
	bool registered;     /* stored was told of a subscription of it: tell it
				the connection closed (CONN_CLOSED) */
	struct outq out;
	bool closing;        /* nothing more is queued or written (conn_set_closing) */
	bool flush_listed;   /* in relayd's flush list (send.h) */
	bool ping_due;       /* a ping is to be written before its next frames (keepalive.h) */
	bool ping_waiting;   /* pinged and not heard from since (keepalive.h) */
	uint16_t heard_s;    /* keepalive clock when it last sent anything (keepalive.h) */
	int64_t opened_at;   /* unix seconds when it opened (relayctl conns) */
	uint64_t messages_in;  /* whole websocket messages it sent */
	uint64_t messages_out; /* frames written to it */
	struct sub **subs;
	uint32_t nsubs, subs_cap;
	struct pending_event *pending;
	uint32_t npending, pending_cap;
	struct count_waits counts; /* COUNTs sent to stored, not yet answered */
};

struct conn_table;

/* A table whose slots count their generations from generation_base.
 * relayd passes a random one: stored keeps state by connection id for a
 * while after a connection closes (its query marks, turnqueue.h), and the
 * ids of a restarted worker's first connections should not be its
 * predecessor's. */
struct conn_table *conn_table_new(uint32_t generation_base);
/* Frees the table and every connection left in it.  NULL-safe. */
void conn_table_free(struct conn_table *t);

/* Adds a connection for wsi; NULL without memory. */
struct conn *conn_open(struct conn_table *t, struct lws *wsi);
/* Frees c and everything it owns; its id stops resolving. */
void conn_close(struct conn_table *t, struct conn *c);
/* c's websocket is closing: from now on nothing is queued for it or
 * written to it (send.h checks c->closing), and what it had queued is
 * freed.  Returns true for the call that began it, false after.  The
 * close itself is send_close()'s: RFC 6455 (5.5.1) allows no data frame
 * after a Close frame. */
bool conn_set_closing(struct conn *c);
/* The live connection named id, or NULL. */
struct conn *conn_find(struct conn_table *t, uint64_t id);
/* The connection in slot now, whatever its generation, or NULL: for what
 * is counted per slot (an ingress lane's queued messages, ingress.c). */
struct conn *conn_in_slot(struct conn_table *t, uint32_t slot);
/* The slot part of an id (to pick an ingress thread). */
uint32_t conn_id_slot(uint64_t id);
/* Open connections. */
uint32_t conn_count(const struct conn_table *t);
/* Calls fn for every open connection; fn may not open or close any. */
void conn_foreach(struct conn_table *t, void (*fn)(struct conn *c, void *arg), void *arg);

/* c's subscription named id (len bytes), or NULL. */
struct sub *conn_sub_find(struct conn *c, const char *id, size_t len);
/* c's subscription numbered serial, or NULL. */
struct sub *conn_sub_find_serial(struct conn *c, uint32_t serial);
/* The next serial for a new subscription of c from the worker's *counter:
 * never 0 and never one of c's open subscriptions', so a relay up long
 * enough for the counter to wrap (2^32 REQs of one worker) still tells
 * c's subscriptions apart. */
uint32_t conn_sub_next_serial(struct conn *c, uint32_t *counter);
/* Adds a subscription of c named id (len bytes, under 257), taking filters
 * in every case.  Returns it, or NULL (filters freed) without memory or
 * room. */
struct sub *conn_sub_add(struct conn *c, const char *id, size_t len, uint32_t serial,
			 struct filter *filters, uint32_t nfilters);
/* Removes s from c and frees it.  The last subscription takes its place in
 * c->subs. */
void conn_sub_remove(struct conn *c, struct sub *s);
/* Subscriptions over all connections. */
uint32_t conn_sub_total(struct conn_table *t);

/* Notes an event sent to stored as request_id, answered by deadline (ms,
 * monotonic).  Returns 0 or ERR_NOMEM.  Entries stay in the order added. */
int conn_pending_add(struct conn *c, uint32_t request_id, const uint8_t id[32], int64_t deadline);
/* Removes the entry for request_id into *out; returns 0 or ERR_NOTFOUND. */
int conn_pending_take(struct conn *c, uint32_t request_id, struct pending_event *out);

/* A scratch buffer of at least len bytes shared by all writes of the table
 * (one write at a time on the service thread); NULL without memory. */
unsigned char *conn_scratch(struct conn_table *t, size_t len);

#endif
