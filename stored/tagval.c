/* tagval.c - how a tag value is kept in the tags table (see tagval.h). */
#include "tagval.h"

#include <string.h>

#include "../common/err.h"
#include "../common/hex.h"

#define TAGVAL_HEX_LEN 64

const void *tagval_key(const void *value, size_t len, uint8_t buf[TAGVAL_PACKED_LEN],
		       int *key_len)
{
	if (len == TAGVAL_HEX_LEN && hex_decode(value, len, buf + 1, TAGVAL_PACKED_LEN - 1) == 0) {
		buf[0] = 0;
		*key_len = TAGVAL_PACKED_LEN;
		return buf;
	}
	*key_len = (int)len;
	return value;
}

int tagval_bind(sqlite3_stmt *st, int at, const void *value, size_t len)
{
	uint8_t buf[TAGVAL_PACKED_LEN];
	int n;
	const void *key = tagval_key(value, len, buf, &n);

	/* SQLite keeps the pointer until the next bind unless told to copy. */
	if (sqlite3_bind_blob(st, at, key, n, key == buf ? SQLITE_TRANSIENT : SQLITE_STATIC))
		return ERR_DB;
	return 0;
}

int tagval_bind_key(sqlite3_stmt *st, int at, const uint8_t key[32])
{
	uint8_t buf[TAGVAL_PACKED_LEN];

	buf[0] = 0;
	memcpy(buf + 1, key, TAGVAL_PACKED_LEN - 1);
	return sqlite3_bind_blob(st, at, buf, TAGVAL_PACKED_LEN, SQLITE_TRANSIENT) ? ERR_DB : 0;
}

/* tagval_key(value): the kept form of a stored value (a blob or text of
 * any length); NULL stays NULL. */
static void tagval_sql_key(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint8_t buf[TAGVAL_PACKED_LEN];
	int n;
	const void *value;
	const void *key;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	value = sqlite3_value_blob(argv[0]);
	key = tagval_key(value, (size_t)sqlite3_value_bytes(argv[0]), buf, &n);
	if (n == 0)
		sqlite3_result_zeroblob(ctx, 0); /* a NULL pointer would make it NULL */
	else
		sqlite3_result_blob(ctx, key, n, SQLITE_TRANSIENT);
}

int tagval_register(sqlite3 *db)
{
	if (sqlite3_create_function(db, "tagval_key", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    tagval_sql_key, NULL, NULL) != SQLITE_OK)
		return ERR_DB;
	return 0;
}
