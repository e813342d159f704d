/* sentids.c - ids of stored events sent while an answer was unfinished (see sentids.h). */
#include "sentids.h"

#include <stdlib.h>
#include <string.h>

#include "../common/hex.h"

static const char id_head[] = "{\"id\":\"";

bool sent_ids_key(const char *json, size_t len, uint64_t *key)
{
	size_t head = sizeof(id_head) - 1;
	uint8_t bytes[8];

	/* 16 hex digits are the first 8 bytes; the rest need not be read. */
	if (len < head + 64 || memcmp(json, id_head, head) != 0 ||
	    hex_decode(json + head, 16, bytes, sizeof(bytes)) != 0)
		return false;
	*key = 0;
	for (int i = 0; i < 8; i++)
		*key = (*key << 8) | bytes[i];
	return true;
}

bool sent_ids_add(struct sent_ids *s, uint64_t key)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *v;

		if (s->cap >= SENT_IDS_MAX)
			return false;
		if (cap > SENT_IDS_MAX)
			cap = SENT_IDS_MAX;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return false;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = key;
	return true;
}

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void sent_ids_seal(struct sent_ids *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), key_cmp);
	s->sealed = s->n;
}

bool sent_ids_has(const struct sent_ids *s, uint64_t key)
{
	size_t lo = 0, hi = s->sealed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] == key)
			return true;
		if (s->v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void sent_ids_clear(struct sent_ids *s)
{
	free(s->v);
	*s = (struct sent_ids){ 0 };
}
