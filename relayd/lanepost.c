/* lanepost.c - frames an ingress lane posts for a connection (see lanepost.h). */
#include "lanepost.h"

#include <stdlib.h>
#include <string.h>

#include "mailbox.h"
#include "relayd.h"
#include "reply.h"

void lanepost_text(struct relayd *r, uint64_t conn_id, char *text, size_t len)
{
	struct mail *m;

	if (!text)
		return;
	m = mail_new(MAIL_TEXT, conn_id);
	if (!m) {
		free(text);
		return;
	}
	m->text = text;
	m->text_len = len;
	mailbox_post(r->mailbox, m);
}

void lanepost_notice(struct relayd *r, uint64_t conn_id, const char *message)
{
	size_t len;
	char *text = reply_notice(message, &len);

	lanepost_text(r, conn_id, text, len);
}

void lanepost_closed(struct relayd *r, uint64_t conn_id, const char *sub_id, size_t sub_len,
		     const char *message)
{
	size_t len;
	char *text = reply_closed(sub_id, sub_len, message, &len);

	lanepost_text(r, conn_id, text, len);
}

void lanepost_req_refused(struct relayd *r, uint64_t conn_id, const char *sub_id, size_t sub_len,
			  const char *message)
{
	struct mail *m = mail_new(MAIL_SUB_CLOSE, conn_id);

	/* Ahead of the CLOSED in the same mailbox: the service thread ends the
	 * old subscription before the client can read that it is closed. */
	if (m && sub_len < sizeof(m->sub_id)) {
		memcpy(m->sub_id, sub_id, sub_len);
		m->sub_id_len = (uint32_t)sub_len;
		mailbox_post(r->mailbox, m);
	} else {
		mail_free(m);
	}
	lanepost_closed(r, conn_id, sub_id, sub_len, message);
}

void lanepost_neg_err(struct relayd *r, uint64_t conn_id, const char *sub_id, size_t sub_len,
		      const char *message)
{
	size_t len;
	char *text = reply_neg_err(sub_id, sub_len, message, &len);

	lanepost_text(r, conn_id, text, len);
}
