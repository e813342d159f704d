/* iplimit.c - per-address connection counts and token buckets (see iplimit.h). */
#include "iplimit.h"

#include <stdlib.h>
#include <string.h>

#include "../common/config.h"

#define IPLIMIT_BUCKETS 4096

struct ip_entry {
	struct ip_entry *next;
	char ip[64];
	uint32_t conns;
	uint32_t strikes;
	double tokens[2];   /* by enum iplimit_kind */
	int64_t refilled_ms;
};

struct iplimit {
	const struct config *cfg;
	struct ip_entry *bucket[IPLIMIT_BUCKETS];
	uint32_t count;
};

struct iplimit *iplimit_new(const struct config *cfg)
{
	struct iplimit *t = calloc(1, sizeof(*t));

	if (t)
		t->cfg = cfg;
	return t;
}

void iplimit_set_config(struct iplimit *t, const struct config *cfg)
{
	t->cfg = cfg;
}

void iplimit_free(struct iplimit *t)
{
	if (!t)
		return;
	for (int i = 0; i < IPLIMIT_BUCKETS; i++) {
		struct ip_entry *e = t->bucket[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(t);
}

static uint32_t iplimit_hash(const char *ip)
{
	uint32_t h = 2166136261u;

	for (; *ip; ip++)
		h = (h ^ (uint8_t)*ip) * 16777619u;
	return h % IPLIMIT_BUCKETS;
}

static double iplimit_rate(const struct iplimit *t, enum iplimit_kind kind)
{
	return kind == IPLIMIT_EVENT ? t->cfg->events_per_second : t->cfg->reqs_per_second;
}

static double iplimit_burst(const struct iplimit *t, enum iplimit_kind kind)
{
	return kind == IPLIMIT_EVENT ? t->cfg->events_burst : t->cfg->reqs_burst;
}

static struct ip_entry *iplimit_find(struct iplimit *t, const char *ip, bool create, int64_t now)
{
	struct ip_entry **p = &t->bucket[iplimit_hash(ip)];

	for (; *p; p = &(*p)->next)
		if (strcmp((*p)->ip, ip) == 0)
			return *p;
	if (!create || !(*p = calloc(1, sizeof(**p))))
		return NULL;
	strncpy((*p)->ip, ip, sizeof((*p)->ip) - 1);
	(*p)->tokens[IPLIMIT_EVENT] = iplimit_burst(t, IPLIMIT_EVENT);
	(*p)->tokens[IPLIMIT_REQ] = iplimit_burst(t, IPLIMIT_REQ);
	(*p)->refilled_ms = now;
	t->count++;
	return *p;
}

static void iplimit_refill(const struct iplimit *t, struct ip_entry *e, int64_t now)
{
	double seconds = (double)(now - e->refilled_ms) / 1000.0;

	if (seconds <= 0)
		return;
	for (int k = 0; k < 2; k++) {
		/* No limit (rate 0): a full bucket, so the entry can be swept. */
		if (iplimit_rate(t, (enum iplimit_kind)k) == 0)
			e->tokens[k] = iplimit_burst(t, (enum iplimit_kind)k);
		e->tokens[k] += seconds * iplimit_rate(t, (enum iplimit_kind)k);
		if (e->tokens[k] > iplimit_burst(t, (enum iplimit_kind)k))
			e->tokens[k] = iplimit_burst(t, (enum iplimit_kind)k);
	}
	e->refilled_ms = now;
}

/* Loopback is exempt unless limit_loopback: behind a local reverse proxy
 * every client would otherwise share one address's limits. */
static bool iplimit_exempt(const struct iplimit *t, const char *ip)
{
	if (t->cfg->limit_loopback)
		return false;
	return strncmp(ip, "127.", 4) == 0 || strcmp(ip, "::1") == 0 ||
	       strncmp(ip, "::ffff:127.", 11) == 0;
}

bool iplimit_connect(struct iplimit *t, const char *ip, int64_t now_ms, bool *counted)
{
	struct ip_entry *e;

	*counted = false;
	if (iplimit_exempt(t, ip))
		return true;
	e = iplimit_find(t, ip, true, now_ms);

	if (!e)
		return true; /* out of memory: do not punish the client for it */
	if (t->cfg->max_connections_per_ip && e->conns >= t->cfg->max_connections_per_ip)
		return false;
	e->conns++;
	*counted = true;
	return true;
}

void iplimit_disconnect(struct iplimit *t, const char *ip, bool counted)
{
	/* Not judged again by the config of now: a reload of limit_loopback
	 * between connect and disconnect would leave a count behind. */
	struct ip_entry *e = counted ? iplimit_find(t, ip, false, 0) : NULL;

	if (e && e->conns)
		e->conns--;
}

bool iplimit_take(struct iplimit *t, const char *ip, enum iplimit_kind kind, int64_t now_ms)
{
	struct ip_entry *e;

	if (iplimit_exempt(t, ip))
		return true;
	e = iplimit_find(t, ip, true, now_ms);

	if (!e || iplimit_rate(t, kind) == 0)
		return true; /* no limit configured (rate 0) */
	iplimit_refill(t, e, now_ms);
	if (e->tokens[kind] >= 1.0) {
		e->tokens[kind] -= 1.0;
		return true;
	}
	e->strikes++;
	return false;
}

uint32_t iplimit_strikes(struct iplimit *t, const char *ip)
{
	struct ip_entry *e = iplimit_find(t, ip, false, 0);

	return e ? e->strikes : 0;
}

/* An idle entry can go once its buckets are full again: keeping it would
 * change nothing for the address's next connection. */
static bool iplimit_idle(const struct iplimit *t, const struct ip_entry *e)
{
	return e->conns == 0 && e->strikes == 0 &&
	       e->tokens[IPLIMIT_EVENT] >= iplimit_burst(t, IPLIMIT_EVENT) &&
	       e->tokens[IPLIMIT_REQ] >= iplimit_burst(t, IPLIMIT_REQ);
}

void iplimit_sweep(struct iplimit *t, int64_t now_ms)
{
	for (int i = 0; i < IPLIMIT_BUCKETS; i++) {
		struct ip_entry **p = &t->bucket[i];

		while (*p) {
			struct ip_entry *e = *p;

			iplimit_refill(t, e, now_ms);
			e->strikes /= 2;
			if (iplimit_idle(t, e)) {
				*p = e->next;
				free(e);
				t->count--;
			} else {
				p = &e->next;
			}
		}
	}
}

uint32_t iplimit_count(const struct iplimit *t)
{
	return t->count;
}
