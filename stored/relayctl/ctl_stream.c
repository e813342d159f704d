/*
 * ctl_stream.c - relayctl stream: mirror another relay's events as they
 * come (see ctl.h).
 *
 * One REQ with the filter stays open on the upstream.  Every event it sends
 * is stored through the import path (stored checks the signature, policy,
 * replaceable rules and deletions) with source "stream", in batches of at
 * most CTL_STREAM_BATCH events or CTL_STREAM_FLUSH_MS old.  When the
 * connection ends, the stream reconnects after a backoff (1 s, doubling to
 * 60 s, back to 1 s once a subscription reached EOSE) and asks again with
 * since = the newest created_at stored minus CTL_STREAM_MARGIN seconds, so
 * events the upstream took while the stream was away arrive too (those
 * seen twice are duplicates).  It runs until SIGTERM or SIGINT, then stores
 * what it holds and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/json.h"
#include "ctl.h"

#define CTL_STREAM_SUB "relayctl-stream"
#define CTL_STREAM_BATCH 500
#define CTL_STREAM_FLUSH_MS 200
#define CTL_STREAM_MARGIN 60
#define CTL_STREAM_BACKOFF_MAX_S 60

static volatile sig_atomic_t ctl_stream_stop;

static void ctl_stream_on_signal(int sig)
{
	(void)sig;
	ctl_stream_stop = 1;
}

struct ctl_stream {
	struct ctl *c;
	cJSON *filter;
	cJSON *pending; /* events not stored yet */
	int64_t newest;  /* created_at of the newest event stored */
	size_t received;
	struct ctl_tally tally;
	unsigned connects;
};

static int64_t ctl_stream_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Stores what is pending; returns 0 or 1 (stored unreachable). */
static int ctl_stream_flush(struct ctl_stream *st)
{
	cJSON *events = st->pending;
	int status;

	if (cJSON_GetArraySize(events) == 0)
		return 0;
	st->pending = cJSON_CreateArray();
	status = ctl_store_events(st->c, events, "stream", &st->tally);
	cJSON_Delete(events);
	return status;
}

/* The REQ, resuming from the newest event stored. */
static int ctl_stream_subscribe(struct ctl_stream *st, struct ctl_peer *p)
{
	cJSON *req = cJSON_CreateArray(), *f = cJSON_Duplicate(st->filter, true);
	int rc;

	if (st->newest > CTL_STREAM_MARGIN) {
		cJSON_DeleteItemFromObjectCaseSensitive(f, "since");
		cJSON_AddNumberToObject(f, "since", (double)(st->newest - CTL_STREAM_MARGIN));
	}
	cJSON_AddItemToArray(req, cJSON_CreateString("REQ"));
	cJSON_AddItemToArray(req, cJSON_CreateString(CTL_STREAM_SUB));
	cJSON_AddItemToArray(req, f);
	rc = ctl_peer_send_json(p, req);
	cJSON_Delete(req);
	return rc;
}

/* Takes one message of the upstream: an event is queued.  Returns 1 once
 * the subscription reached EOSE, -1 when the upstream closed it. */
static int ctl_stream_take(struct ctl_stream *st, cJSON *m)
{
	const char *verb = cJSON_GetStringValue(cJSON_GetArrayItem(m, 0));
	const char *sub = cJSON_GetStringValue(cJSON_GetArrayItem(m, 1));
	cJSON *ev = cJSON_GetArrayItem(m, 2);

	if (!verb || !sub || strcmp(sub, CTL_STREAM_SUB) != 0) {
		if (verb && !strcmp(verb, "NOTICE"))
			fprintf(stderr, "relayctl: the upstream says: %s\n", sub ? sub : "");
		return 0;
	}
	if (!strcmp(verb, "EVENT") && cJSON_IsObject(ev)) {
		double t = ctl_num(ev, "created_at");

		if (t > (double)st->newest)
			st->newest = (int64_t)t;
		cJSON_AddItemToArray(st->pending, cJSON_DetachItemFromArray(m, 2));
		st->received++;
		return 0;
	}
	if (!strcmp(verb, "EOSE"))
		return 1;
	if (!strcmp(verb, "CLOSED")) {
		fprintf(stderr, "relayctl: the upstream closed the subscription: %s\n",
			cJSON_GetStringValue(ev) ? cJSON_GetStringValue(ev) : "");
		return -1;
	}
	return 0;
}

/* Reads one connection until it ends or a stop; returns whether it was
 * healthy (reached EOSE), or -1 when stored failed. */
static int ctl_stream_session(struct ctl_stream *st, struct ctl_peer *p)
{
	int64_t first_pending = 0;
	int healthy = 0;

	if (ctl_stream_subscribe(st, p))
		return 0;
	while (!ctl_stream_stop && !ctl_peer_gone(p)) {
		cJSON *m = ctl_peer_next(p, 100);
		int r = m ? ctl_stream_take(st, m) : 0;

		cJSON_Delete(m);
		if (r == 1)
			healthy = 1;
		if (cJSON_GetArraySize(st->pending) && !first_pending)
			first_pending = ctl_stream_ms();
		if (cJSON_GetArraySize(st->pending) >= CTL_STREAM_BATCH ||
		    (first_pending && ctl_stream_ms() - first_pending >= CTL_STREAM_FLUSH_MS) ||
		    r == 1) {
			if (ctl_stream_flush(st))
				return -1;
			first_pending = 0;
		}
		if (r == -1)
			break;
	}
	return ctl_stream_flush(st) ? -1 : healthy;
}

/* Sleeps s seconds unless a stop comes first. */
static void ctl_stream_sleep(unsigned s)
{
	for (unsigned i = 0; i < s * 10 && !ctl_stream_stop; i++)
		usleep(100000);
}

int ctl_stream(struct ctl *c)
{
	struct ctl_stream st = { .c = c };
	unsigned backoff = 1;
	int status = 0;

	st.filter = c->nargs > 1 && c->args[1][0] ? json_parse(c->args[1], strlen(c->args[1]), false)
						  : cJSON_CreateObject();
	if (!cJSON_IsObject(st.filter)) {
		fprintf(stderr, "relayctl: the filter must be one JSON object\n");
		cJSON_Delete(st.filter);
		return 2;
	}
	st.pending = cJSON_CreateArray();
	signal(SIGTERM, ctl_stream_on_signal);
	signal(SIGINT, ctl_stream_on_signal);
	signal(SIGPIPE, SIG_IGN);
	while (!ctl_stream_stop && status == 0) {
		struct ctl_peer *p = ctl_peer_open(c->args[0], 10000);
		int r = p ? ctl_stream_session(&st, p) : 0;

		ctl_peer_close(p);
		if (r < 0) {
			status = 1;
			break;
		}
		st.connects += p != NULL;
		backoff = r == 1 ? 1 : (backoff * 2 > CTL_STREAM_BACKOFF_MAX_S ? CTL_STREAM_BACKOFF_MAX_S
									: backoff * 2);
		if (!ctl_stream_stop) {
			fprintf(stderr, "relayctl: the upstream %s is gone; again in %u s (since %lld)\n",
				c->args[0], backoff, (long long)(st.newest - CTL_STREAM_MARGIN));
			ctl_stream_sleep(backoff);
		}
	}
	printf("stream: received %zu, stored %zu, duplicate %zu, refused %zu, connections %u\n",
	       st.received, st.tally.stored, st.tally.duplicate, st.tally.refused, st.connects);
	cJSON_Delete(st.pending);
	cJSON_Delete(st.filter);
	return status;
}
