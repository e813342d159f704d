/* policy.c - applying stored's NIP-86 policy in a worker (see policy.h). */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

#include "../proto/msg.h"
#include "relayd.h"

static char *policy_dup(const struct msg_str *s)
{
	char *copy = malloc((size_t)s->len + 1);

	if (copy) {
		memcpy(copy, s->ptr, s->len);
		copy[s->len] = '\0';
	}
	return copy;
}

/* Replaces *field with s; returns whether the text changed. */
static bool policy_text(char **field, const struct msg_str *s)
{
	char *next;

	if (*field && strlen(*field) == s->len && memcmp(*field, s->ptr, s->len) == 0)
		return false;
	if (!*field && s->len == 0)
		return false;
	next = policy_dup(s);
	if (!next)
		return false;
	free(*field);
	*field = next;
	return true;
}

static int policy_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void policy_blocked(struct policy_state *p, const struct msg_policy *m)
{
	char **list = m->nblocked ? calloc(m->nblocked, sizeof(*list)) : NULL;

	if (m->nblocked && !list)
		return; /* keep the old list rather than none */
	for (unsigned i = 0; i < m->nblocked; i++)
		list[i] = policy_dup(&m->blocked_ips[i]);
	for (unsigned i = 0; i < p->nblocked; i++)
		free(p->blocked[i]);
	free(p->blocked);
	p->blocked = list;
	p->nblocked = m->nblocked;
	if (list)
		qsort(list, p->nblocked, sizeof(*list), policy_compare);
}

bool policy_apply(struct relayd *r, const struct msg_policy *m)
{
	struct policy_state *p = r->policy;
	bool changed = policy_text(&p->name, &m->relay_name);

	changed |= policy_text(&p->description, &m->relay_description);
	changed |= policy_text(&p->icon, &m->relay_icon);
	changed |= p->writes_restricted != (m->writes_restricted != 0);
	p->writes_restricted = m->writes_restricted != 0;
	policy_blocked(p, m);
	return changed;
}

bool policy_ip_blocked(const struct relayd *r, const char *ip)
{
	const struct policy_state *p = r->policy;

	if (!p->nblocked || !ip[0])
		return false;
	return bsearch(&ip, p->blocked, p->nblocked, sizeof(*p->blocked), policy_compare) != NULL;
}

struct policy_state *policy_new(void)
{
	return calloc(1, sizeof(struct policy_state));
}

void policy_free(struct policy_state *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->description);
	free(p->icon);
	for (unsigned i = 0; i < p->nblocked; i++)
		free(p->blocked[i]);
	free(p->blocked);
	free(p);
}
