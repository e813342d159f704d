/*
 * reply.h - the relay-to-client messages of NIP-01, as text.
 *
 * Each function returns a malloc'ed, NUL-terminated frame and its length in
 * *len, or NULL without memory.  Strings are escaped for the wire
 * (jsonstr_append_wire), so a subscription id decodes back byte for byte.
 */
#ifndef RELAYD_REPLY_H
#define RELAYD_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ["OK","<id hex>",true|false,"<message>"] */
char *reply_ok(const uint8_t id[32], bool accepted, const char *message, size_t *len);
/* ["NOTICE","<message>"] */
char *reply_notice(const char *message, size_t *len);
/* ["CLOSED","<sub>","<message>"] */
char *reply_closed(const char *sub_id, size_t sub_len, const char *message, size_t *len);
/* ["EOSE","<sub>"] */
char *reply_eose(const char *sub_id, size_t sub_len, size_t *len);
/* ["EVENT","<sub>",  -- the head of an EVENT frame; the caller appends the
 * event JSON and "]". */
char *reply_event_head(const char *sub_id, size_t sub_len, size_t *len);
/* ["COUNT","<sub>",{"count":<n>}] with ,"hll":"<512 hex>" when hll is not
 * NULL (256 registers). */
char *reply_count(const char *sub_id, size_t sub_len, uint64_t count, const uint8_t *hll,
		  size_t *len);
/* A whole ["EVENT","<sub>",<json>] frame. */
char *reply_event(const char *sub_id, size_t sub_len, const char *json, size_t json_len,
		  size_t *len);

/* ["NEG-MSG","<sub>","<hex of msg>"] (NIP-77). */
char *reply_neg_msg(const char *sub_id, size_t sub_len, const uint8_t *msg, size_t msg_len,
		    size_t *len);
/* ["NEG-ERR","<sub>","<message>"] (NIP-77). */
char *reply_neg_err(const char *sub_id, size_t sub_len, const char *message, size_t *len);

#endif
