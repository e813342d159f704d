/*
 * verb_auth.c - ["AUTH", <kind 22242 event>] (NIP-42).
 *
 * The event is checked like any other (id, signature), then against the
 * connection's challenge and this relay's URL; a good one adds its pubkey
 * to what the connection is authenticated as.  It is answered with OK and
 * never stored or broadcast.  With auth_challenge = when_needed, a
 * connection gets its challenge from here, just before the first answer
 * that asks it to authenticate.
 */
#include <string.h>

#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/err.h"
#include "auth.h"
#include "lanepost.h"
#include "mailbox.h"
#include "relayd.h"
#include "reply.h"
#include "verbs.h"

static void verb_auth_answer(struct verb_ctx *v, const uint8_t id[32], const char *why)
{
	size_t len = 0;
	char *text = reply_ok(id, why == NULL, why ? why : "", &len);

	lanepost_text(v->r, v->conn_id, text, len);
}

/* The connection's subscriptions opened before this AUTH take its pubkey
 * too (for private kinds, private.h).  Posted before the OK, and after any
 * REQ of the connection handled earlier (the mailbox keeps order), so every
 * subscription the client opened before it sees the OK has the pubkey. */
static void verb_auth_tell_subs(struct verb_ctx *v, const uint8_t pubkey[32])
{
	struct mail *m = mail_new(MAIL_AUTHED, v->conn_id);

	if (!m)
		return; /* later REQs still get the pubkey (auth_list) */
	memcpy(m->viewers[0], pubkey, 32);
	m->nviewers = 1;
	mailbox_post(v->r->mailbox, m);
}

void verb_auth_challenge(struct verb_ctx *v)
{
	size_t n = 0;
	char *frame;

	if (!strcmp(relayd_cfg(v->r)->auth_challenge, "connect") ||
	    !auth_first_challenge(v->auth, v->conn_id))
		return; /* it has its challenge already */
	frame = auth_challenge_frame(v->r, v->conn_id, &n);
	lanepost_text(v->r, v->conn_id, frame, n);
}

void verb_auth(struct verb_ctx *v)
{
	const cJSON *obj = cJSON_GetArrayItem(v->msg, 1);
	struct event ev;
	const char *why;
	char reason[160];

	if (v->nargs != 1 || !cJSON_IsObject(obj)) {
		lanepost_notice(v->r, v->conn_id, "invalid: AUTH takes exactly one event object");
		return;
	}
	if (event_parse(obj, NULL, &ev, reason, sizeof(reason))) {
		if (memcmp(ev.id, (uint8_t[32]){ 0 }, 32) != 0)
			verb_auth_answer(v, ev.id, reason);
		else
			lanepost_notice(v->r, v->conn_id, reason);
		return;
	}
	why = sig_verify_event(v->verifier, &ev) ? "invalid: signature does not verify"
						  : auth_check(v->r, v->auth, v->conn_id, &ev, obj);
	if (!why && auth_add(v->auth, v->conn_id, ev.pubkey) == ERR_FULL)
		why = "restricted: this connection has authenticated too many pubkeys";
	if (!why)
		verb_auth_tell_subs(v, ev.pubkey);
	verb_auth_answer(v, ev.id, why);
	event_free(&ev);
}
