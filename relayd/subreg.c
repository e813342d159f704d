/* subreg.c - SUB_OPEN and SUB_CLOSE for stored (see subreg.h). */
#include "subreg.h"

#include <string.h>

#include "../common/buf.h"
#include "../common/deadline.h"
#include "../proto/msg.h"
#include "conn.h"
#include "link.h"
#include "relayd.h"

/* Sends one encoded request and frees it: on the control path when
 * control (link_send_control), else as a client's request (link_send). */
static int subreg_send(struct relayd *r, struct buf *out, uint32_t request_id, bool control)
{
	int rc = control ? link_send_control(r, request_id, out->data, out->len)
			 : link_send(r, request_id, out->data, out->len);

	buf_free(out);
	return rc;
}

int subreg_open(struct relayd *r, struct conn *c, struct sub *s, uint64_t resume_after,
		bool restoring)
{
	uint32_t request_id = link_request_id(r);
	struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
	bool resume = s->state != SUB_QUERYING;
	struct msg_sub_open m = { c->id, s->serial, { s->id, s->id_len },
				  resume ? MSG_SUB_RESUME : MSG_SUB_HISTORY, resume ? resume_after : 0,
				  s->nfilters, s->filters, 0, { { 0 } } };
	struct buf out = BUF_INIT;
	int rc;

	/* stored picks the private events these may read before it applies
	 * the limit; this worker still checks each one it sends (private.h). */
	_Static_assert(sizeof(m.viewers) == sizeof(s->viewers), "viewers");
	if (s->restricted) {
		m.nviewers = s->nviewers;
		memcpy(m.viewers, s->viewers, sizeof(m.viewers));
	}
	s->resume_after = m.resume_after;
	subreg_answer_due(r, s);
	if (msg_encode_sub_open(&out, &h, &m)) {
		buf_free(&out);
		return -1;
	}
	/* A client's REQ may be refused (CLOSED); a subscription stored lost
	 * in a restart must be registered again, however many there are. */
	rc = subreg_send(r, &out, request_id, restoring);
	if (rc == 0)
		c->registered = true;
	return rc;
}

void subreg_answer_due(struct relayd *r, struct sub *s)
{
	s->answer_deadline_ms = deadline_now_ms() + relayd_cfg(r)->answer_timeout_ms;
}

void subreg_close(struct relayd *r, struct conn *c, struct sub *s)
{
	uint32_t request_id = link_request_id(r);
	struct msg_header h = msg_header_for((uint16_t)r->instance, request_id);
	struct msg_sub_close m = { c->id, { s->id, s->id_len } };
	struct buf out = BUF_INIT;

	if (msg_encode_sub_close(&out, &h, &m) == 0)
		subreg_send(r, &out, request_id, true);
	else
		buf_free(&out);
}
