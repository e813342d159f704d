/*
 * policy.h - the NIP-86 state a worker enforces or shows, as stored last
 * published it (service thread only): relay name, description and icon
 * overrides for the NIP-11 document, and the blocked IP addresses.
 */
#ifndef RELAYD_POLICY_H
#define RELAYD_POLICY_H

#include <stdbool.h>

struct relayd;
struct msg_policy;

struct policy_state {
	char *name, *description, *icon; /* owned; NULL or "" = as configured */
	char **blocked;                  /* owned, sorted */
	unsigned nblocked;
	bool writes_restricted;          /* a NIP-86 allow list is in force */
};

/* Takes stored's latest POLICY into r->policy; m is only read.  Returns
 * whether the NIP-11 document must be built again (a text or the write
 * restriction changed). */
bool policy_apply(struct relayd *r, const struct msg_policy *m);
/* Whether connections from ip are refused (NIP-86 blockip). */
bool policy_ip_blocked(const struct relayd *r, const char *ip);
/* An empty state (every text as configured, nothing blocked), or NULL
 * without memory.  r->policy holds it. */
struct policy_state *policy_new(void);
/* Frees p and what it holds.  NULL-safe. */
void policy_free(struct policy_state *p);

#endif
