/* replay.c - stored events a worker lost, asked for again (see replay.h). */
#include "replay.h"

#include "../common/buf.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "conn.h"
#include "link.h"
#include "relayd.h"

struct replay_round {
	struct relayd *r;
	uint64_t after, before;
	uint32_t sent;
};

static void replay_conn(struct conn *c, void *arg)
{
	struct replay_round *round = arg;
	struct relayd *r = round->r;

	for (uint32_t i = 0; i < c->nsubs; i++) {
		struct sub *s = c->subs[i];
		/* Nothing past its floor reached it as history. */
		uint64_t after = s->floor_seq > round->after ? s->floor_seq : round->after;
		uint32_t request_id;
		struct msg_header h;
		struct msg_sub_replay m;
		struct buf out = BUF_INIT;

		if (s->state != SUB_LIVE || round->before <= after + 1)
			continue;
		request_id = link_request_id(r) | REPLAY_ID_BIT;
		h = (struct msg_header){ PROTO_VERSION, MSG_SUB_REPLAY, (uint16_t)r->instance,
					 request_id };
		m = (struct msg_sub_replay){ c->id, s->serial, after, round->before, s->nfilters,
					     s->filters };
		if (msg_encode_sub_replay(&out, &h, &m) == 0 &&
		    link_send(r, request_id, out.data, out.len) == 0) {
			r->replay.outstanding++;
			round->sent++;
		}
		buf_free(&out);
	}
}

static void replay_round(struct relayd *r, uint64_t after, uint64_t before)
{
	struct replay_round round = { r, after, before, 0 };
	uint32_t subs = conn_sub_total(r->conns);

	if (r->replay.outstanding + subs > REPLAY_MAX_OUTSTANDING) {
		if (r->replay.skipped++ == 0)
			log_warnx("live deliveries from stored keep being lost; %u replays are"
				  " unanswered, so commits %llu..%llu are not asked for again",
				  r->replay.outstanding, (unsigned long long)after + 1,
				  (unsigned long long)before - 1);
		return;
	}
	conn_foreach(r->conns, replay_conn, &round);
	if (round.sent && r->replay.rounds++ == 0)
		log_info("live deliveries from stored were lost; asked again for the stored events"
			 " among them (commits %llu..%llu, %u subscriptions; later rounds at debug)",
			 (unsigned long long)after + 1, (unsigned long long)before - 1, round.sent);
	else if (round.sent)
		log_debug("replay round %llu: commits %llu..%llu, %u subscriptions",
			  (unsigned long long)r->replay.rounds, (unsigned long long)after + 1,
			  (unsigned long long)before - 1, round.sent);
}

void replay_note(struct relayd *r, uint64_t lost, uint64_t commit_seq, uint64_t prev_commit_seq)
{
	if (lost && !r->replay.pending) {
		r->replay.pending = true;
		r->replay.after = prev_commit_seq;
	}
	if (r->replay.pending && commit_seq) {
		r->replay.pending = false;
		replay_round(r, r->replay.after, commit_seq);
	}
}

bool replay_is_id(uint32_t request_id)
{
	return (request_id & REPLAY_ID_BIT) != 0;
}

void replay_answered(struct relayd *r)
{
	if (r->replay.outstanding)
		r->replay.outstanding--;
}

void replay_reset(struct relayd *r)
{
	r->replay.pending = false;
	r->replay.outstanding = 0;
}
