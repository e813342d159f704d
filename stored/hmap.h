/*
 * hmap.h - a hash map from byte strings to pointers, for stored's indexes.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), kept at most 3/4 full; it halves when it falls below 1/8 full.
 * Keys are hashed with SipHash-2-4 under a caller-chosen 128-bit key, because
 * many keys (filter values, subscription ids) come from clients, who must not
 * be able to pile them into one probe chain.
 *
 * Ownership: the map borrows its keys.  The bytes a key points to must stay
 * unchanged until the entry is removed or its key replaced (the usual way is
 * for the value to hold its own key).  Values are never NULL (NULL means "not
 * found") and the map never dereferences them.
 *
 * The struct is visible only so it can be embedded; its fields are private.
 * Threading: not thread-safe.
 */
#ifndef STORED_HMAP_H
#define STORED_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t hash;
	const void *key;
	size_t len;
	void *value; /* NULL marks a free slot */
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t count;
	uint64_t k0, k1;
};

/* SipHash-2-4 of len bytes under the key (k0, k1); k0 is the key's first eight
 * bytes read little-endian, k1 the last eight. */
uint64_t hmap_siphash(uint64_t k0, uint64_t k1, const void *data, size_t len);

/* A hash key from the kernel, for tables whose keys clients choose.  The
 * clock-and-address fallback is weak, but it only matters if getrandom()
 * fails (entropy not ready at early boot). */
void hmap_seed(uint64_t seed[2]);

/* Initialises an empty map hashing under (k0, k1).  Allocates nothing. */
void hmap_init(struct hmap *m, uint64_t k0, uint64_t k1);

/* Releases the table (not the keys or values) and leaves m empty and usable. */
void hmap_free(struct hmap *m);

/* Number of entries. */
size_t hmap_count(const struct hmap *m);

/* The value stored under key (len bytes, len 0 allowed), or NULL. */
void *hmap_get(const struct hmap *m, const void *key, size_t len);

/*
 * Makes room for n entries in total, so that inserting until the map holds n
 * entries cannot fail.  Returns 0 or ERR_NOMEM (map unchanged).
 */
int hmap_reserve(struct hmap *m, size_t n);

/*
 * Stores value under key.  If the key is present, both the stored key pointer
 * and the value are replaced (this never allocates, so never fails).
 * Returns 0, ERR_INVAL (value NULL) or ERR_NOMEM (map unchanged).
 */
int hmap_put(struct hmap *m, const void *key, size_t len, void *value);

/* Removes key and returns its value, or returns NULL if absent.  Never fails
 * (if shrinking cannot allocate, the map keeps its larger table). */
void *hmap_remove(struct hmap *m, const void *key, size_t len);

/*
 * Iteration: start with *pos = 0 and call until NULL.  Returns each value
 * once, in no particular order.  The map must not change during iteration.
 */
void *hmap_next(const struct hmap *m, size_t *pos);

#endif
