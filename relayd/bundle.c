/* bundle.c - EVENT_STOREs sent together (see bundle.h). */
#include "bundle.h"

#include <string.h>
#include <time.h>

#include "../common/deadline.h"
#include "link.h"
#include "mailbox.h"
#include "relayd.h"

/* The service thread answers these events error: (their OK was pending),
 * all told in one post. */
static void bundle_fail_all(struct relayd *r, const struct store_bundle *b)
{
	struct mail_list failed = { NULL, NULL };

	for (uint32_t i = 0; i < b->count; i++)
		mail_list_append(&failed, mail_new_event(MAIL_EVENT_FAILED, b->conn_id[i],
							 b->request_id[i], b->event_id[i]));
	mailbox_post_list(r->mailbox, &failed);
}

static int bundle_send(struct relayd *r, const struct store_bundle *b)
{
	struct msg_str views[MSG_BUNDLE_MAX];
	struct msg_bundle m = { b->count, views };
	struct msg_header h = msg_header_for((uint16_t)r->instance, 0);
	struct buf out = BUF_INIT;
	int rc;

	if (b->count == 1) /* nothing to bundle */
		return link_send(r, b->request_id[0], b->parts[0].data, b->parts[0].len);
	for (uint32_t i = 0; i < b->count; i++)
		views[i] = (struct msg_str){ b->parts[i].data, (uint32_t)b->parts[i].len };
	rc = msg_encode_bundle(&out, &h, &m);
	if (rc == 0)
		rc = link_send(r, link_request_id(r), out.data, out.len);
	buf_free(&out);
	return rc;
}

void bundle_flush(struct relayd *r, struct store_bundle *b)
{
	if (!b->count)
		return;
	/* Known to the service thread before stored can answer (mailbox.h). */
	mailbox_post_list(r->mailbox, &b->pending);
	if (bundle_send(r, b))
		bundle_fail_all(r, b);
	for (uint32_t i = 0; i < b->count; i++)
		buf_free(&b->parts[i]);
	b->count = 0;
	b->bytes = 0;
}

void bundle_add(struct relayd *r, struct store_bundle *b, struct buf *msg, uint64_t conn_id,
		uint32_t request_id, const uint8_t event_id[EVENT_ID_LEN])
{
	if (b->count == MSG_BUNDLE_MAX || (b->count && b->bytes + msg->len > BUNDLE_MAX_BYTES))
		bundle_flush(r, b);
	/* Lost without memory, as a mail always is: that client gets no OK. */
	mail_list_append(&b->pending,
			 mail_new_event(MAIL_EVENT_PENDING, conn_id, request_id, event_id));
	b->parts[b->count] = *msg;
	*msg = (struct buf)BUF_INIT;
	b->conn_id[b->count] = conn_id;
	b->request_id[b->count] = request_id;
	memcpy(b->event_id[b->count], event_id, EVENT_ID_LEN);
	b->bytes += b->parts[b->count].len;
	if (b->count++ == 0)
		b->first_us = deadline_now_us();
}

void bundle_flush_if_due(struct relayd *r, struct store_bundle *b)
{
	if (b->count && deadline_now_us() - b->first_us >= BUNDLE_MAX_WAIT_US)
		bundle_flush(r, b);
}
