/* reply.c - formatting NIP-01 relay messages (see reply.h). */
#include "reply.h"

#include <string.h>

#include "../common/buf.h"
#include "../common/hex.h"
#include "../common/jsonstr.h"

static char *reply_finish(struct buf *b, int failed, size_t *len)
{
	if (failed) {
		buf_free(b);
		return NULL;
	}
	*len = b->len;
	return buf_take(b);
}

char *reply_ok(const uint8_t id[32], bool accepted, const char *message, size_t *len)
{
	struct buf b = BUF_INIT;
	char hex[65];
	int failed;

	hex_encode(id, 32, hex);
	failed = buf_append_str(&b, "[\"OK\",\"") || buf_append(&b, hex, 64) ||
		 buf_append_str(&b, accepted ? "\",true," : "\",false,") ||
		 jsonstr_append_wire(&b, message, strlen(message)) || buf_append_byte(&b, ']');
	return reply_finish(&b, failed, len);
}

char *reply_notice(const char *message, size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"NOTICE\",") ||
		     jsonstr_append_wire(&b, message, strlen(message)) || buf_append_byte(&b, ']');

	return reply_finish(&b, failed, len);
}

char *reply_closed(const char *sub_id, size_t sub_len, const char *message, size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"CLOSED\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_byte(&b, ',') || jsonstr_append_wire(&b, message, strlen(message)) ||
		     buf_append_byte(&b, ']');

	return reply_finish(&b, failed, len);
}

char *reply_eose(const char *sub_id, size_t sub_len, size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"EOSE\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_byte(&b, ']');

	return reply_finish(&b, failed, len);
}

char *reply_event_head(const char *sub_id, size_t sub_len, size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"EVENT\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_byte(&b, ',');

	return reply_finish(&b, failed, len);
}

char *reply_count(const char *sub_id, size_t sub_len, uint64_t count, const uint8_t *hll,
		  size_t *len)
{
	struct buf b = BUF_INIT;
	char hex[513];
	int failed = buf_append_str(&b, "[\"COUNT\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_str(&b, ",{\"count\":") || buf_append_int(&b, (int64_t)count);

	if (!failed && hll) {
		hex_encode(hll, 256, hex);
		failed = buf_append_str(&b, ",\"hll\":\"") || buf_append(&b, hex, 512) ||
			 buf_append_byte(&b, '"');
	}
	failed = failed || buf_append_str(&b, "}]");
	return reply_finish(&b, failed, len);
}

char *reply_event(const char *sub_id, size_t sub_len, const char *json, size_t json_len,
		  size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"EVENT\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_byte(&b, ',') || buf_append(&b, json, json_len) ||
		     buf_append_byte(&b, ']');

	return reply_finish(&b, failed, len);
}

char *reply_neg_msg(const char *sub_id, size_t sub_len, const uint8_t *msg, size_t msg_len,
		    size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"NEG-MSG\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_str(&b, ",\"") || buf_reserve(&b, msg_len * 2 + 3);

	if (!failed) {
		hex_encode(msg, msg_len, b.data + b.len);
		b.len += msg_len * 2;
		failed = buf_append_str(&b, "\"]");
	}
	return reply_finish(&b, failed, len);
}

char *reply_neg_err(const char *sub_id, size_t sub_len, const char *message, size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, "[\"NEG-ERR\",") || jsonstr_append_wire(&b, sub_id, sub_len) ||
		     buf_append_byte(&b, ',') || jsonstr_append_wire(&b, message, strlen(message)) ||
		     buf_append_byte(&b, ']');

	return reply_finish(&b, failed, len);
}
