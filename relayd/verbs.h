/*
 * verbs.h - handlers for the client verbs of NIP-01, run on ingress lanes.
 *
 * Each handler gets the parsed message (a JSON array whose first element is
 * the verb) and answers through the mailbox: a protocol reply for a client
 * mistake, or work for the service thread / stored.
 */
#ifndef RELAYD_VERBS_H
#define RELAYD_VERBS_H

#include <cjson/cJSON.h>
#include <stdint.h>

struct relayd;
struct sig_verifier;
struct auth_table;

struct store_bundle;

struct verb_ctx {
	struct relayd *r;
	struct sig_verifier *verifier; /* the lane's own */
	uint64_t conn_id;
	const cJSON *msg;              /* the whole array */
	int nargs;                     /* elements after the verb */
	struct auth_table *auth;       /* the lane's NIP-42 state (auth.h) */
	struct store_bundle *bundle;   /* the lane's EVENT_STOREs on their way (bundle.h) */
};

void verb_event(struct verb_ctx *v);
void verb_req(struct verb_ctx *v);
void verb_close(struct verb_ctx *v);
void verb_count(struct verb_ctx *v);
void verb_auth(struct verb_ctx *v);
/* NIP-77 (verb_neg.c). */
void verb_neg_open(struct verb_ctx *v);
void verb_neg_msg(struct verb_ctx *v);
void verb_neg_close(struct verb_ctx *v);
/* Before an "auth-required:" answer: posts ["AUTH", challenge] unless the
 * connection had it (on connect, or from an earlier call; NIP-42). */
void verb_auth_challenge(struct verb_ctx *v);

#endif
