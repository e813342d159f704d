/*
 * json.h - the one gate between JSON text and cJSON trees.
 *
 * cJSON keeps every decoded string NUL-terminated and records no length,
 * so a string holding U+0000 ("a\u0000b") would reach the relay cut short
 * at the NUL.  json_parse() reads each \u0000 escape as the two bytes C0 80
 * instead (the "modified UTF-8" spelling of U+0000).  Decoded strings then
 * hold no NUL, and everything that treats them as C strings (tag index,
 * filters, SQLite text, search) keeps the whole string.  The bytes C0 80
 * are invalid UTF-8, so they can come from nothing else: websocket text
 * frames are checked UTF-8, and json_parse() refuses raw C0 80 in its text.
 *
 * Every writer maps the pair back: jsonstr.h writes it as a NUL (the id
 * hash) or as \u0000 (JSON that is sent or stored), and json_print()
 * writes it as \u0000.  A string with U+0000 therefore leaves the relay as
 * exactly the string that came in.
 */
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* How a decoded string spells U+0000 (see above). */
#define JSON_NUL "\xc0\x80"
#define JSON_NUL_LEN 2

/*
 * Parses the len bytes at text (no NUL needed) into a cJSON tree, with
 * every \u0000 in a string decoded as JSON_NUL.  whole: the text must be one
 * value and whitespace only after it; otherwise text after the first value
 * is ignored, as cJSON_ParseWithLength() does.  Returns the tree (free it
 * with cJSON_Delete()), or NULL for text that is not JSON, that holds the
 * raw bytes C0 80, or when memory runs out.
 */
cJSON *json_parse(const char *text, size_t len, bool whole);

/*
 * The compact (pretty: indented) text of item, with every JSON_NUL in a
 * string written as \u0000.  Returns a NUL-terminated string to release
 * with free(), or NULL when memory runs out.
 */
char *json_print(const cJSON *item, bool pretty);

#endif
