/* replay.c - stored events a worker lost, asked for again (see replay.h). */
#include "replay.h"

#include <stdlib.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "conn.h"
#include "link.h"
#include "lostrange.h"
#include "outq.h"
#include "relayd.h"

struct replay {
	bool pending;         /* a loss waits for the next stored delivery */
	uint64_t after;       /* the last commit delivered before that loss */
	uint32_t outstanding; /* replays sent and not yet answered */
	uint64_t rounds, skipped; /* rounds sent, rounds not sent (the cap) */
	uint64_t full;            /* rounds a subscription had no room for */
	uint64_t held_full;       /* subscriptions whose held queue filled up */
	uint64_t sent_full;       /* stored events not noted: SENT_IDS_MAX reached */
};

struct replay *replay_new(void)
{
	return calloc(1, sizeof(struct replay));
}

void replay_free(struct replay *rp)
{
	free(rp);
}

bool replay_sent_full(struct relayd *r)
{
	return r->replay->sent_full++ == 0;
}

struct replay_round {
	struct relayd *r;
	uint64_t after, before;
	uint32_t sent, full;
};

/* Sends a SUB_REPLAY for each of s's unasked ranges while under the cap;
 * what is not sent stays unasked for the next round.  Returns how many. */
static uint32_t replay_ask(struct relayd *r, struct conn *c, struct sub *s)
{
	struct lost_range *lost;
	uint32_t sent = 0;

	while (r->replay->outstanding < REPLAY_MAX_OUTSTANDING &&
	       (lost = lost_ranges_next_unasked(&s->lost))) {
		uint32_t request_id = link_request_id(r) | REPLAY_ID_BIT;
		struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
		struct msg_sub_replay m = { c->id, s->serial, lost->after, lost->before,
					    s->nfilters, s->filters };
		struct buf out = BUF_INIT;
		int err = msg_encode_sub_replay(&out, &h, &m);

		if (!err)
			err = link_send_control(r, request_id, out.data, out.len);
		buf_free(&out);
		if (err)
			break; /* the link is down: asked again once it is back */
		lost->request_id = request_id;
		r->replay->outstanding++;
		sent++;
	}
	return sent;
}

static void replay_conn(struct conn *c, void *arg)
{
	struct replay_round *round = arg;

	for (uint32_t i = 0; i < c->nsubs; i++) {
		struct sub *s = c->subs[i];
		bool live = s->state == SUB_LIVE;
		/* A live one had everything up to its floor as history, so only
		 * the rest is kept (nothing for one registered after the loss). */
		uint64_t after = live && s->floor_seq > round->after ? s->floor_seq : round->after;

		if (!lost_ranges_add(&s->lost, after, round->before, !live)) {
			round->full++;
			continue;
		}
		/* One waiting for its history or resume asks once it has it
		 * (replay_went_live): that may bring part of the range. */
		if (live)
			round->sent += replay_ask(round->r, c, s);
	}
}

static void replay_round(struct relayd *r, uint64_t after, uint64_t before)
{
	struct replay_round round = { r, after, before, 0, 0 };
	uint32_t subs = conn_sub_total(r->conns);

	if (r->replay->outstanding + subs > REPLAY_MAX_OUTSTANDING) {
		if (r->replay->skipped++ == 0)
			log_warnx("live deliveries from stored keep being lost; %u replays are"
				  " unanswered, so commits %llu..%llu are not asked for again",
				  r->replay->outstanding, (unsigned long long)after + 1,
				  (unsigned long long)before - 1);
		return;
	}
	conn_foreach(r->conns, replay_conn, &round);
	if (round.full && r->replay->full++ == 0)
		log_warnx("a subscription already misses %d ranges of lost deliveries; commits"
			  " %llu..%llu are not asked for again for it",
			  LOST_RANGES_MAX, (unsigned long long)after + 1,
			  (unsigned long long)before - 1);
	if (round.sent && r->replay->rounds++ == 0)
		log_info("live deliveries from stored were lost; asked again for the stored events"
			 " among them (commits %llu..%llu, %u replays; later rounds at debug)",
			 (unsigned long long)after + 1, (unsigned long long)before - 1, round.sent);
	else if (round.sent)
		log_debug("replay round %llu: commits %llu..%llu, %u replays",
			  (unsigned long long)r->replay->rounds, (unsigned long long)after + 1,
			  (unsigned long long)before - 1, round.sent);
}

void replay_note(struct relayd *r, uint64_t lost, uint64_t commit_seq, uint64_t prev_commit_seq)
{
	if (lost && !r->replay->pending) {
		r->replay->pending = true;
		r->replay->after = prev_commit_seq;
	}
	if (r->replay->pending && commit_seq) {
		r->replay->pending = false;
		replay_round(r, r->replay->after, commit_seq);
	}
}

bool replay_is_id(uint32_t request_id)
{
	return (request_id & REPLAY_ID_BIT) != 0;
}

void replay_answered(struct relayd *r, struct sub *s, uint32_t request_id)
{
	if (r->replay->outstanding)
		r->replay->outstanding--;
	if (s)
		lost_ranges_answered(&s->lost, request_id);
}

void replay_held_dropped(struct relayd *r, struct sub *s, uint64_t commit_seq)
{
	if (!commit_seq)
		return;
	if (!s->held_dropped_first) {
		s->held_dropped_first = commit_seq;
		if (r->replay->held_full++ == 0)
			log_info("a subscription waiting for its history holds held_deliveries live"
				 " events; later ones are sent from the database once it is live"
				 " (logged once)");
	}
	s->held_dropped_last = commit_seq;
}

struct held_check {
	const struct lost_ranges *lost;
	uint64_t covered_after, covered_to;
};

/* A held delivery whose event the client gets from the database anyway:
 * the history or resume brought it (a history asked again after a stored
 * restart reads past the live events held for the first), or a replay
 * asked now will. */
static bool held_comes_anyway(const struct out_item *item, void *arg)
{
	const struct held_check *k = arg;
	uint64_t seq = item->body ? item->body->commit_seq : 0;

	if (!seq)
		return false;
	return (seq > k->covered_after && seq <= k->covered_to) ||
	       lost_ranges_asked_has(k->lost, seq);
}

void replay_went_live(struct relayd *r, struct conn *c, struct sub *s, uint64_t covered_after,
		      uint64_t covered_to)
{
	struct held_check check = { &s->lost, covered_after, covered_to };

	if (s->held_dropped_first) {
		lost_ranges_add(&s->lost, s->held_dropped_first - 1, s->held_dropped_last + 1, true);
		s->held_dropped_first = s->held_dropped_last = 0;
	}
	lost_ranges_cover(&s->lost, covered_after, covered_to);
	replay_ask(r, c, s);
	outq_drop_if(&s->held, held_comes_anyway, &check);
	lost_ranges_went_live(&s->lost);
}

static void replay_unask_conn(struct conn *c, void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < c->nsubs; i++) {
		lost_ranges_unask(&c->subs[i]->lost);
		sent_ids_seal(&c->subs[i]->sent);
	}
}

void replay_reset(struct relayd *r)
{
	r->replay->pending = false;
	r->replay->outstanding = 0;
	conn_foreach(r->conns, replay_unask_conn, NULL);
}
