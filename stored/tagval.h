/*
 * tagval.h - how a tag value is kept in the tags table.
 *
 * Most indexed tag values are event ids and pubkeys (`e`, `p`): 64
 * lowercase hex digits.  Those are kept as a zero byte followed by their 32
 * bytes, which halves what those values take in the table and in its
 * (name, value, created_at) index, and the bytes compared on every insert
 * and lookup (bench/RESULTS.md item 24).  Every other value is kept as its
 * own bytes.
 *
 * The marker keeps the two forms apart: a value read from a client's JSON
 * never holds a zero byte (event_parse and filter_parse take a string's
 * length up to its first NUL), so no kept text can equal a packed value.
 * Uppercase hex is not packed: a filter's "ABC…" must still match only the
 * text "ABC…".
 *
 * Everything that writes or looks up tags.value goes through tagval_key();
 * stored/upgrade.c converts databases written before (schema version 0).
 */
#ifndef STORED_TAGVAL_H
#define STORED_TAGVAL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* Bytes of a packed value: the zero marker, then 32 bytes. */
#define TAGVAL_PACKED_LEN 33

/*
 * The bytes kept for value (len bytes): packed into buf when value is 64
 * lowercase hex digits, else value itself.  Sets *key_len.
 */
const void *tagval_key(const void *value, size_t len, uint8_t buf[TAGVAL_PACKED_LEN],
		       int *key_len);

/* Binds value's kept form to parameter at of st (copied by SQLite when packed). */
int tagval_bind(sqlite3_stmt *st, int at, const void *value, size_t len);
/* Binds the kept form of a tag value naming the 32-byte key (its hex,
 * packed): how a p tag naming that pubkey is kept. */
int tagval_bind_key(sqlite3_stmt *st, int at, const uint8_t key[32]);

/* Registers the SQL function tagval_key(value) on db, for converting rows. */
int tagval_register(sqlite3 *db);

#endif
