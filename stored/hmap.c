/*
 * hmap.c - byte-string hash map with linear probing (see hmap.h).
 *
 * Invariant: every entry sits in the probe run that starts at its home slot
 * (hash & (cap - 1)) with no free slot in between.  Deletion keeps it by
 * shifting later entries of the run back instead of leaving tombstones.
 */
#include "hmap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../common/deadline.h"
#include "../common/err.h"

#define HMAP_MIN_CAP 16

static uint64_t rotl64(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl64(v[1], 13) ^ v[0];
	v[0] = rotl64(v[0], 32);
	v[2] += v[3];
	v[3] = rotl64(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl64(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl64(v[1], 17) ^ v[2];
	v[2] = rotl64(v[2], 32);
}

static void sip_absorb(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

uint64_t hmap_siphash(uint64_t k0, uint64_t k1, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v[4] = {
		k0 ^ UINT64_C(0x736f6d6570736575),
		k1 ^ UINT64_C(0x646f72616e646f6d),
		k0 ^ UINT64_C(0x6c7967656e657261),
		k1 ^ UINT64_C(0x7465646279746573),
	};
	size_t tail = len & 7;
	uint64_t last = (uint64_t)len << 56;

	for (size_t i = 0; i + 8 <= len; i += 8)
		sip_absorb(v, load_le64(p + i));
	for (size_t i = 0; i < tail; i++)
		last |= (uint64_t)p[len - tail + i] << (8 * i);
	sip_absorb(v, last);
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

void hmap_seed(uint64_t seed[2])
{
	uint64_t now_us;

	if (getrandom(seed, 2 * sizeof(uint64_t), GRND_NONBLOCK) == 2 * sizeof(uint64_t))
		return;
	now_us = (uint64_t)deadline_now_us();
	seed[0] = now_us * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(uintptr_t)seed;
	seed[1] = (now_us >> 20) * UINT64_C(0xc2b2ae3d27d4eb4f);
}

void hmap_init(struct hmap *m, uint64_t k0, uint64_t k1)
{
	memset(m, 0, sizeof(*m));
	m->k0 = k0;
	m->k1 = k1;
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->count = 0;
}

size_t hmap_count(const struct hmap *m)
{
	return m->count;
}

static uint64_t hmap_hash(const struct hmap *m, const void *key, size_t len)
{
	return hmap_siphash(m->k0, m->k1, key, len);
}

static bool slot_holds(const struct hmap_slot *s, uint64_t hash, const void *key, size_t len)
{
	return s->hash == hash && s->len == len && (len == 0 || memcmp(s->key, key, len) == 0);
}

/* The slot holding key, or the free slot that ends its probe run.  Requires
 * a table with at least one free slot. */
static struct hmap_slot *hmap_find(const struct hmap *m, uint64_t hash, const void *key,
				   size_t len)
{
	size_t mask = m->cap - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct hmap_slot *s = &m->slots[i];

		if (!s->value || slot_holds(s, hash, key, len))
			return s;
	}
}

void *hmap_get(const struct hmap *m, const void *key, size_t len)
{
	if (m->count == 0)
		return NULL;
	return hmap_find(m, hmap_hash(m, key, len), key, len)->value;
}

/* Moves every entry into a fresh table of new_cap slots. */
static int hmap_resize(struct hmap *m, size_t new_cap)
{
	struct hmap_slot *old = m->slots;
	size_t old_cap = m->cap;

	m->slots = calloc(new_cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return ERR_NOMEM;
	}
	m->cap = new_cap;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].value)
			*hmap_find(m, old[i].hash, old[i].key, old[i].len) = old[i];
	}
	free(old);
	return 0;
}

int hmap_reserve(struct hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : HMAP_MIN_CAP;

	/* Keep n <= 3/4 of cap; the loop stops before cap can overflow. */
	while (n > cap / 4 * 3) {
		if (cap > SIZE_MAX / 2 / sizeof(struct hmap_slot))
			return ERR_NOMEM;
		cap *= 2;
	}
	if (cap == m->cap)
		return 0;
	return hmap_resize(m, cap);
}

int hmap_put(struct hmap *m, const void *key, size_t len, void *value)
{
	uint64_t hash = hmap_hash(m, key, len);
	struct hmap_slot *s;

	if (!value)
		return ERR_INVAL;
	if (m->cap) {
		s = hmap_find(m, hash, key, len);
		if (s->value) {
			s->key = key;
			s->value = value;
			return 0;
		}
	}
	if (hmap_reserve(m, m->count + 1))
		return ERR_NOMEM;
	s = hmap_find(m, hash, key, len);
	s->hash = hash;
	s->key = key;
	s->len = len;
	s->value = value;
	m->count++;
	return 0;
}

/* True if an entry whose home is `home` may move back to `hole`, i.e. hole
 * lies cyclically in [home, from) where from is where the entry sits now. */
static bool may_fill(size_t home, size_t hole, size_t from, size_t mask)
{
	return ((hole - home) & mask) < ((from - home) & mask);
}

/* Empties slot i and shifts the rest of its probe run back over the gap. */
static void hmap_delete_at(struct hmap *m, size_t hole)
{
	size_t mask = m->cap - 1;

	for (size_t i = (hole + 1) & mask; m->slots[i].value; i = (i + 1) & mask) {
		if (may_fill(m->slots[i].hash & mask, hole, i, mask)) {
			m->slots[hole] = m->slots[i];
			hole = i;
		}
	}
	memset(&m->slots[hole], 0, sizeof(m->slots[hole]));
	m->count--;
}

void *hmap_remove(struct hmap *m, const void *key, size_t len)
{
	struct hmap_slot *s;
	void *value;

	if (m->count == 0)
		return NULL;
	s = hmap_find(m, hmap_hash(m, key, len), key, len);
	value = s->value;
	if (!value)
		return NULL;
	hmap_delete_at(m, (size_t)(s - m->slots));
	if (m->count == 0)
		hmap_free(m);
	else if (m->cap > HMAP_MIN_CAP && m->count < m->cap / 8)
		(void)hmap_resize(m, m->cap / 2); /* on failure keep the larger table */
	return value;
}

void *hmap_next(const struct hmap *m, size_t *pos)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->slots[*pos].value)
			return m->slots[(*pos)++].value;
	}
	return NULL;
}
