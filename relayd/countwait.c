/* countwait.c - the COUNTs a connection waits for (see countwait.h). */
#include "countwait.h"

#include <stdlib.h>
#include <string.h>

#include "../common/err.h"

int count_waits_add(struct count_waits *c, uint32_t request_id, const char *sub_id, size_t len,
		    int64_t deadline_ms)
{
	char *copy;

	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 4;
		struct count_wait *grown = realloc(c->w, cap * sizeof(*grown));

		if (!grown)
			return ERR_NOMEM;
		c->w = grown;
		c->cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return ERR_NOMEM;
	memcpy(copy, sub_id, len);
	copy[len] = '\0';
	c->w[c->n++] = (struct count_wait){ request_id, (uint32_t)len, copy, deadline_ms };
	return 0;
}

bool count_waits_take(struct count_waits *c, uint32_t request_id, struct count_wait *out)
{
	/* Answers come mostly in the order asked: the match is near the front. */
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->w[i].request_id != request_id)
			continue;
		if (out)
			*out = c->w[i];
		else
			free(c->w[i].sub_id);
		memmove(&c->w[i], &c->w[i + 1], (c->n - i - 1) * sizeof(*c->w));
		c->n--;
		return true;
	}
	return false;
}

void count_waits_drain(struct count_waits *c,
		       void (*fn)(void *arg, const char *sub_id, size_t len), void *arg)
{
	for (uint32_t i = 0; i < c->n; i++) {
		fn(arg, c->w[i].sub_id, c->w[i].sub_id_len);
		free(c->w[i].sub_id);
	}
	c->n = 0;
}

uint32_t count_waits_expire(struct count_waits *c, int64_t now_ms,
			    void (*fn)(void *arg, const char *sub_id, size_t len), void *arg)
{
	uint32_t kept = 0, expired = 0;

	/* Not only a prefix: answer_timeout_ms may have been reloaded between
	 * two COUNTs, so a later one can have the earlier deadline. */
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->w[i].deadline_ms > now_ms) {
			c->w[kept++] = c->w[i];
			continue;
		}
		fn(arg, c->w[i].sub_id, c->w[i].sub_id_len);
		free(c->w[i].sub_id);
		expired++;
	}
	c->n = kept;
	return expired;
}

void count_waits_free(struct count_waits *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		free(c->w[i].sub_id);
	free(c->w);
	*c = (struct count_waits){ 0 };
}
