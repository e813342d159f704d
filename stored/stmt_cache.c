/* stmt_cache.c - prepared statements reused by text (see stmt_cache.h). */
#include "stmt_cache.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"

struct stmt_entry {
	char *sql;
	size_t len;
	uint64_t hash;
	sqlite3_stmt *st;
	uint64_t last_used;
	bool out; /* taken and not yet released */
};

struct stmt_cache {
	sqlite3 *db;
	struct stmt_entry *entries;
	size_t capacity, count;
	uint64_t clock;
	size_t prepared;
};

struct stmt_cache *stmt_cache_new(sqlite3 *db, size_t capacity)
{
	struct stmt_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->entries = calloc(capacity ? capacity : 1, sizeof(*c->entries));
	if (!c->entries) {
		free(c);
		return NULL;
	}
	c->db = db;
	c->capacity = capacity ? capacity : 1;
	return c;
}

static void stmt_entry_clear(struct stmt_entry *e)
{
	sqlite3_finalize(e->st);
	free(e->sql);
	memset(e, 0, sizeof(*e));
}

void stmt_cache_free(struct stmt_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->count; i++)
		stmt_entry_clear(&c->entries[i]);
	free(c->entries);
	free(c);
}

/* FNV-1a: the texts differ early (shape) or late (number of values). */
static uint64_t stmt_hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static struct stmt_entry *stmt_cache_find(struct stmt_cache *c, const char *sql, size_t len,
					  uint64_t hash)
{
	for (size_t i = 0; i < c->count; i++) {
		struct stmt_entry *e = &c->entries[i];

		if (!e->out && e->hash == hash && e->len == len && memcmp(e->sql, sql, len) == 0)
			return e;
	}
	return NULL;
}

/* A free entry: a new one while there is room, else the least recently
 * used one not taken (its statement finalized); NULL if all are taken. */
static struct stmt_entry *stmt_cache_slot(struct stmt_cache *c)
{
	struct stmt_entry *oldest = NULL;

	if (c->count < c->capacity)
		return &c->entries[c->count++];
	for (size_t i = 0; i < c->count; i++) {
		struct stmt_entry *e = &c->entries[i];

		if (!e->out && (!oldest || e->last_used < oldest->last_used))
			oldest = e;
	}
	if (oldest)
		stmt_entry_clear(oldest);
	return oldest;
}

/* Files a newly prepared st under its text; NULL (st not kept) without
 * memory or when every entry is out. */
static struct stmt_entry *stmt_cache_keep(struct stmt_cache *c, const char *sql, size_t len,
					  uint64_t hash, sqlite3_stmt *st)
{
	char *copy = malloc(len ? len : 1);
	struct stmt_entry *e = copy ? stmt_cache_slot(c) : NULL;

	if (!e) {
		free(copy);
		return NULL;
	}
	memcpy(copy, sql, len);
	*e = (struct stmt_entry){ copy, len, hash, st, 0, false };
	return e;
}

int stmt_cache_take(struct stmt_cache *c, const char *sql, size_t len, sqlite3_stmt **out)
{
	uint64_t hash = stmt_hash(sql, len);
	struct stmt_entry *e = stmt_cache_find(c, sql, len, hash);
	sqlite3_stmt *st;

	if (!e) {
		if (sqlite3_prepare_v3(c->db, sql, (int)len, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
		    SQLITE_OK)
			return ERR_DB;
		c->prepared++;
		e = stmt_cache_keep(c, sql, len, hash, st);
		if (!e) {
			*out = st;
			return 0;
		}
	}
	e->out = true;
	e->last_used = ++c->clock;
	*out = e->st;
	return 0;
}

void stmt_cache_release(struct stmt_cache *c, sqlite3_stmt *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < c->count; i++) {
		if (c->entries[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			c->entries[i].out = false;
			return;
		}
	}
	sqlite3_finalize(st); /* one that was not kept */
}

size_t stmt_cache_prepared(const struct stmt_cache *c)
{
	return c->prepared;
}
