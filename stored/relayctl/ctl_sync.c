/*
 * ctl_sync.c - relayctl sync: this relay's events matching a filter
 * reconciled with another relay's over NIP-77 (see ctl.h).
 *
 * This side is the initiator.  Its (created_at, id) set comes from stored's
 * export pages, so the set is what the database holds (the operator's view,
 * private kinds included).  Once reconciled, "down" fetches what only the
 * peer holds with REQs by ids, in batches, and stores them through the
 * import path (stored checks each signature, then policy, replaceable rules
 * and deletions) with source "sync".  "up" reads what only this side holds
 * from stored and publishes it with EVENT, waiting for each OK and backing
 * off on "rate-limited:".  A summary goes to stdout at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/hex.h"
#include "../../common/json.h"
#include "../../common/neg.h"
#include "ctl.h"

#define CTL_SYNC_SUB "relayctl-sync"
#define CTL_SYNC_FRAME 60000   /* our messages' frame limit */
#define CTL_SYNC_BATCH 100     /* ids per REQ, per export page of publishes */
#define CTL_SYNC_WAIT_MS 30000 /* for any one answer of the peer */
#define CTL_SYNC_RETRIES 8     /* publishes refused rate-limited:, each */

struct ctl_ids {
	uint8_t (*ids)[NEG_ID_LEN];
	size_t n, cap;
};

struct ctl_sync {
	struct ctl *c;
	struct ctl_peer *peer;
	cJSON *filter;
	bool down, up;
	struct neg_item *items;
	size_t nitems, cap;
	struct ctl_ids have, need;
	unsigned rounds;
	uint64_t neg_out, neg_in; /* negentropy payload bytes each way (binary) */
	struct ctl_tally tally; /* of what came down */
	size_t fetched, published, accepted, refused_there;
	int tty;
	struct timespec started;
	double loaded_s, reconciled_s; /* when the local set was read, and the reconciliation done */
};

static void ctl_ids_add(void *arg, const uint8_t id[NEG_ID_LEN])
{
	struct ctl_ids *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		void *grown = realloc(l->ids, cap * NEG_ID_LEN);

		if (!grown) {
			fprintf(stderr, "relayctl: out of memory\n");
			exit(1);
		}
		l->ids = grown;
		l->cap = cap;
	}
	memcpy(l->ids[l->n++], id, NEG_ID_LEN);
}

/* ---- this side's set ---- */

static int ctl_sync_add_item(struct ctl_sync *s, const cJSON *ev)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(ev, "id");
	double created_at = ctl_num(ev, "created_at");
	struct neg_item *it;

	if (!cJSON_IsString(id))
		return -1;
	if (s->nitems == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		void *grown = realloc(s->items, cap * sizeof(*s->items));

		if (!grown)
			return -1;
		s->items = grown;
		s->cap = cap;
	}
	it = &s->items[s->nitems];
	it->ts = created_at > 0 ? (uint64_t)created_at : 0;
	if (hex_decode(id->valuestring, strlen(id->valuestring), it->id, NEG_ID_LEN))
		return -1;
	s->nitems++;
	return 0;
}

/* One export page of filter after seq last; calls add for each event. */
static int ctl_sync_page(struct ctl_sync *s, cJSON *filter, double *last, bool *more,
			 int (*add)(struct ctl_sync *s, const cJSON *ev))
{
	cJSON *req = cJSON_CreateObject(), *reply = NULL;
	const cJSON *ev;
	int status;

	cJSON_AddStringToObject(req, ADMIN_F_CMD, "export");
	cJSON_AddItemReferenceToObject(req, ADMIN_F_FILTER, filter);
	cJSON_AddNumberToObject(req, ADMIN_F_AFTER, *last);
	cJSON_AddNumberToObject(req, ADMIN_F_LIMIT, 1000);
	status = ctl_call(s->c, req, &reply, NULL) || ctl_failed(reply);
	cJSON_Delete(req);
	if (status == 0) {
		cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_EVENTS))
			if (add(s, ev))
				status = 1;
		*last = ctl_num(reply, ADMIN_F_LAST);
		*more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_MORE));
	}
	cJSON_Delete(reply);
	return status;
}

static int ctl_sync_load(struct ctl_sync *s)
{
	double last = 0;
	bool more = true;
	int status = 0;

	while (more && status == 0)
		status = ctl_sync_page(s, s->filter, &last, &more, ctl_sync_add_item);
	neg_sort(s->items, s->nitems);
	return status;
}

/* ---- reconciliation ---- */

static int ctl_sync_send_neg(struct ctl_sync *s, const char *verb, const struct buf *msg)
{
	char *hex = malloc(msg->len * 2 + 1);
	cJSON *frame = cJSON_CreateArray();
	int rc;

	if (!hex) {
		cJSON_Delete(frame);
		return -1;
	}
	hex_encode((const uint8_t *)msg->data, msg->len, hex);
	s->neg_out += msg->len;
	cJSON_AddItemToArray(frame, cJSON_CreateString(verb));
	cJSON_AddItemToArray(frame, cJSON_CreateString(CTL_SYNC_SUB));
	if (!strcmp(verb, "NEG-OPEN"))
		cJSON_AddItemReferenceToArray(frame, s->filter);
	cJSON_AddItemToArray(frame, cJSON_CreateString(hex));
	rc = ctl_peer_send_json(s->peer, frame);
	cJSON_Delete(frame);
	free(hex);
	return rc;
}

/* The peer's next NEG-MSG payload for our session into bin, or -1 after
 * saying why (NEG-ERR, a timeout, a closed connection). */
static int ctl_sync_await(struct ctl_sync *s, struct buf *bin)
{
	for (;;) {
		cJSON *m = ctl_peer_next(s->peer, CTL_SYNC_WAIT_MS);
		const char *verb = m ? cJSON_GetStringValue(cJSON_GetArrayItem(m, 0)) : NULL;
		const char *sub = m ? cJSON_GetStringValue(cJSON_GetArrayItem(m, 1)) : NULL;
		const char *arg = m ? cJSON_GetStringValue(cJSON_GetArrayItem(m, 2)) : NULL;
		int rc = 1;

		if (!m) {
			fprintf(stderr, "relayctl: the peer %s\n",
				ctl_peer_gone(s->peer) ? "closed the connection" : "did not answer in time");
			return -1;
		}
		if (verb && !strcmp(verb, "NOTICE"))
			fprintf(stderr, "relayctl: the peer says: %s\n", sub ? sub : "");
		if (verb && sub && arg && !strcmp(sub, CTL_SYNC_SUB) && !strcmp(verb, "NEG-ERR")) {
			fprintf(stderr, "relayctl: the peer refused the sync: %s\n", arg);
			rc = -1;
		} else if (verb && sub && arg && !strcmp(sub, CTL_SYNC_SUB) && !strcmp(verb, "NEG-MSG")) {
			size_t n = strlen(arg);

			buf_reset(bin);
			rc = (n % 2 || buf_reserve(bin, n / 2) ||
			      hex_decode(arg, n, (uint8_t *)bin->data, n / 2)) ? -1 : 0;
			if (rc == 0) {
				bin->len = n / 2;
				s->neg_in += n / 2;
			}
			else
				fprintf(stderr, "relayctl: the peer sent a NEG-MSG that is not hex\n");
		}
		cJSON_Delete(m);
		if (rc <= 0)
			return rc;
	}
}

static void ctl_sync_on_have(void *arg, const uint8_t id[NEG_ID_LEN])
{
	ctl_ids_add(&((struct ctl_sync *)arg)->have, id);
}

static void ctl_sync_on_need(void *arg, const uint8_t id[NEG_ID_LEN])
{
	ctl_ids_add(&((struct ctl_sync *)arg)->need, id);
}

static int ctl_sync_reconcile(struct ctl_sync *s)
{
	struct neg_side side = { true, ctl_sync_on_have, ctl_sync_on_need, s, false };
	struct buf out = BUF_INIT, in = BUF_INIT;
	int rc = neg_initiate(s->items, s->nitems, CTL_SYNC_FRAME, &out);

	rc = rc ? rc : ctl_sync_send_neg(s, "NEG-OPEN", &out);
	while (rc == 0 && !side.done) {
		rc = ctl_sync_await(s, &in);
		if (rc)
			break;
		s->rounds++;
		buf_reset(&out);
		rc = neg_reconcile(s->items, s->nitems, (uint8_t *)in.data, in.len, CTL_SYNC_FRAME,
				   &side, &out);
		if (rc)
			fprintf(stderr, "relayctl: the peer's negentropy message is malformed\n");
		if (s->tty)
			fprintf(stderr, "\rround %u: have %zu, need %zu", s->rounds, s->have.n,
				s->need.n);
		if (rc == 0 && !side.done)
			rc = ctl_sync_send_neg(s, "NEG-MSG", &out);
	}
	if (s->tty)
		fprintf(stderr, "\n");
	if (rc == 0) {
		const char close[] = "[\"NEG-CLOSE\",\"" CTL_SYNC_SUB "\"]";

		ctl_peer_send(s->peer, close, sizeof(close) - 1);
	}
	buf_free(&out);
	buf_free(&in);
	return rc ? 1 : 0;
}

/* ---- down: fetch by ids, store as "sync" ---- */

static cJSON *ctl_sync_ids_filter(const struct ctl_ids *l, size_t from, size_t n)
{
	cJSON *f = cJSON_CreateObject(), *ids = cJSON_AddArrayToObject(f, "ids");
	char hex[2 * NEG_ID_LEN + 1];

	for (size_t i = from; i < from + n; i++) {
		hex_encode(l->ids[i], NEG_ID_LEN, hex);
		cJSON_AddItemToArray(ids, cJSON_CreateString(hex));
	}
	return f;
}

/* One REQ for n ids; the events it brings, stored. */
static int ctl_sync_fetch_batch(struct ctl_sync *s, size_t from, size_t n)
{
	cJSON *req = cJSON_CreateArray(), *events = cJSON_CreateArray(), *f;
	int status = 0;

	f = ctl_sync_ids_filter(&s->need, from, n);
	cJSON_AddNumberToObject(f, "limit", (double)n);
	cJSON_AddItemToArray(req, cJSON_CreateString("REQ"));
	cJSON_AddItemToArray(req, cJSON_CreateString("relayctl-fetch"));
	cJSON_AddItemToArray(req, f);
	if (ctl_peer_send_json(s->peer, req))
		status = 1;
	while (status == 0) {
		cJSON *m = ctl_peer_next(s->peer, CTL_SYNC_WAIT_MS);
		const char *verb = cJSON_GetStringValue(cJSON_GetArrayItem(m, 0));

		if (!m || !verb) {
			status = m ? 0 : 1;
		} else if (!strcmp(verb, "EVENT") && cJSON_IsObject(cJSON_GetArrayItem(m, 2))) {
			cJSON_AddItemToArray(events, cJSON_DetachItemFromArray(m, 2));
			s->fetched++;
		} else if (!strcmp(verb, "EOSE") || !strcmp(verb, "CLOSED")) {
			cJSON_Delete(m);
			break;
		}
		cJSON_Delete(m);
	}
	if (status == 0) {
		const char close[] = "[\"CLOSE\",\"relayctl-fetch\"]";

		ctl_peer_send(s->peer, close, sizeof(close) - 1);
		if (cJSON_GetArraySize(events))
			status = ctl_store_events(s->c, events, "sync", &s->tally);
	}
	cJSON_Delete(req);
	cJSON_Delete(events);
	return status;
}

static int ctl_sync_down(struct ctl_sync *s)
{
	for (size_t i = 0; i < s->need.n; i += CTL_SYNC_BATCH) {
		size_t n = s->need.n - i < CTL_SYNC_BATCH ? s->need.n - i : CTL_SYNC_BATCH;

		if (ctl_sync_fetch_batch(s, i, n))
			return 1;
		if (s->tty)
			fprintf(stderr, "\rfetched %zu of %zu", s->fetched, s->need.n);
	}
	if (s->tty && s->need.n)
		fprintf(stderr, "\n");
	return 0;
}

/* ---- up: publish, honouring OK ---- */

/* The OK for id (hex): 1 accepted, 0 refused, -1 rate-limited, -2 none. */
static int ctl_sync_await_ok(struct ctl_sync *s, const char *id)
{
	for (;;) {
		cJSON *m = ctl_peer_next(s->peer, CTL_SYNC_WAIT_MS);
		const char *verb = cJSON_GetStringValue(cJSON_GetArrayItem(m, 0));
		const char *ok_id = cJSON_GetStringValue(cJSON_GetArrayItem(m, 1));
		const char *why = cJSON_GetStringValue(cJSON_GetArrayItem(m, 3));
		int rc = -3;

		if (!m)
			return -2;
		if (verb && ok_id && !strcmp(verb, "OK") && !strcmp(ok_id, id)) {
			rc = cJSON_IsTrue(cJSON_GetArrayItem(m, 2)) ? 1 : 0;
			if (!rc && why && !strncmp(why, "rate-limited:", 13))
				rc = -1;
			else if (!rc)
				fprintf(stderr, "relayctl: the peer refused %s: %s\n", id, why ? why : "");
		}
		cJSON_Delete(m);
		if (rc != -3)
			return rc;
	}
}

static int ctl_sync_publish(struct ctl_sync *s, const cJSON *ev)
{
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "id"));
	cJSON *frame = cJSON_CreateArray();
	int rc = -1;

	cJSON_AddItemToArray(frame, cJSON_CreateString("EVENT"));
	cJSON_AddItemReferenceToArray(frame, (cJSON *)ev);
	for (int tries = 0; id && rc == -1 && tries < CTL_SYNC_RETRIES; tries++) {
		if (tries)
			usleep(250000u << (tries < 4 ? tries : 4)); /* backoff up to 4 s */
		rc = ctl_peer_send_json(s->peer, frame) ? -2 : ctl_sync_await_ok(s, id);
	}
	cJSON_Delete(frame);
	s->published++;
	if (rc == 1)
		s->accepted++;
	else
		s->refused_there++;
	return rc == -2 ? 1 : 0;
}

static int ctl_sync_up(struct ctl_sync *s)
{
	for (size_t i = 0; i < s->have.n; i += CTL_SYNC_BATCH) {
		size_t n = s->have.n - i < CTL_SYNC_BATCH ? s->have.n - i : CTL_SYNC_BATCH;
		cJSON *f = ctl_sync_ids_filter(&s->have, i, n);
		double last = 0;
		bool more = true;
		int status = 0;

		while (more && status == 0)
			status = ctl_sync_page(s, f, &last, &more, ctl_sync_publish);
		cJSON_Delete(f);
		if (status)
			return 1;
		if (s->tty)
			fprintf(stderr, "\rpublished %zu of %zu", s->published, s->have.n);
	}
	if (s->tty && s->have.n)
		fprintf(stderr, "\n");
	return 0;
}

/* ---- the command ---- */

static double ctl_sync_seconds(const struct ctl_sync *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - s->started.tv_sec) +
	       (double)(now.tv_nsec - s->started.tv_nsec) / 1e9;
}

static void ctl_sync_summary(const struct ctl_sync *s, int status)
{
	printf("sync %s: here %zu, have %zu (only here), need %zu (only there), rounds %u\n",
	       status ? "incomplete" : "done", s->nitems, s->have.n, s->need.n, s->rounds);
	printf("down: fetched %zu, stored %zu, duplicate %zu, refused %zu\n", s->fetched,
	       s->tally.stored, s->tally.duplicate, s->tally.refused);
	/* An event of ours the fetch superseded (a newer version came down) is
	 * gone by the time it would go up: neither sent nor a failure. */
	printf("up: published %zu, accepted %zu, refused %zu, gone here %zu\n", s->published,
	       s->accepted, s->refused_there, s->up ? s->have.n - s->published : 0);
	printf("bytes: sent %llu, received %llu (negentropy %llu and %llu before hex)\n",
	       (unsigned long long)ctl_peer_bytes_out(s->peer),
	       (unsigned long long)ctl_peer_bytes_in(s->peer), (unsigned long long)s->neg_out,
	       (unsigned long long)s->neg_in);
	printf("time: %.2f s (reading this side %.2f s, reconciling %.2f s)\n", ctl_sync_seconds(s),
	       s->loaded_s, s->reconciled_s - s->loaded_s);
}

static int ctl_sync_args(struct ctl_sync *s, struct ctl *c)
{
	const char *dir = c->dir ? c->dir : "down";

	s->down = !strcmp(dir, "down") || !strcmp(dir, "both");
	s->up = !strcmp(dir, "up") || !strcmp(dir, "both");
	if (!s->down && !s->up) {
		fprintf(stderr, "relayctl: --dir is down, up or both, not '%s'\n", dir);
		return 2;
	}
	s->filter = c->nargs > 1 ? json_parse(c->args[1], strlen(c->args[1]), false)
				 : cJSON_CreateObject();
	if (!cJSON_IsObject(s->filter)) {
		fprintf(stderr, "relayctl: the filter must be one JSON object\n");
		return 2;
	}
	return 0;
}

int ctl_sync(struct ctl *c)
{
	struct ctl_sync s = { .c = c, .tty = isatty(STDERR_FILENO) };
	int status = ctl_sync_args(&s, c);

	clock_gettime(CLOCK_MONOTONIC, &s.started);
	if (status == 0)
		status = ctl_sync_load(&s);
	s.loaded_s = ctl_sync_seconds(&s);
	if (status == 0 && !(s.peer = ctl_peer_open(c->args[0], 10000)))
		status = 1;
	if (status == 0)
		status = ctl_sync_reconcile(&s);
	s.reconciled_s = ctl_sync_seconds(&s);
	if (c->dry_run) /* reconcile only: the counts, nothing moved */
		s.down = s.up = false;
	if (status == 0 && s.down)
		status = ctl_sync_down(&s);
	if (status == 0 && s.up)
		status = ctl_sync_up(&s);
	if (status != 2 && s.peer) {
		if (status == 0 && ((s.down && (s.fetched < s.need.n || s.tally.refused)) ||
				    (s.up && s.refused_there)))
			status = 1;
		ctl_sync_summary(&s, status);
	}
	ctl_peer_close(s.peer);
	cJSON_Delete(s.filter);
	free(s.items);
	free(s.have.ids);
	free(s.need.ids);
	return status;
}
