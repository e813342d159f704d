/*
 * json.c - JSON text to and from cJSON, with U+0000 kept (see json.h).
 *
 * The rewrite is lexical: it follows string boundaries and escapes only as
 * far as needed to find a \u0000 that cJSON would decode.  Text without
 * the six characters \u0000 goes to cJSON as it is, with no copy.
 */
#include "json.h"

#include <stdlib.h>
#include <string.h>

static const char json_nul_escape[] = "\\u0000";
#define JSON_NUL_ESCAPE_LEN (sizeof(json_nul_escape) - 1)

/* The first JSON_NUL in the len bytes at s, or NULL.  memchr() for its
 * first byte, which valid UTF-8 never holds, is many times faster than
 * memmem() on this path that every message takes. */
static const char *json_find_pair(const char *s, size_t len)
{
	const char *end = s + len;

	for (const char *p = s; (p = memchr(p, 0xc0, (size_t)(end - p))); p++)
		if (p + 1 < end && (unsigned char)p[1] == 0x80)
			return p;
	return NULL;
}

/* True if the text \u0000 is in the len bytes at s (inside a string or
 * not: json_nul_rewrite() tells).  Backslashes are few in most messages. */
static bool json_has_nul_escape(const char *s, size_t len)
{
	const char *end = s + len;

	for (const char *p = s; (p = memchr(p, '\\', (size_t)(end - p))); p++)
		if ((size_t)(end - p) >= JSON_NUL_ESCAPE_LEN &&
		    memcmp(p, json_nul_escape, JSON_NUL_ESCAPE_LEN) == 0)
			return true;
	return false;
}

/* A copy of the len bytes at text with each \u0000 inside a string written
 * as JSON_NUL; its length in *out_len.  NULL when memory runs out. */
static char *json_nul_rewrite(const char *text, size_t len, size_t *out_len)
{
	char *out = malloc(len + 1);
	size_t n = 0;
	bool in_string = false;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string && c == '\\' && len - i >= JSON_NUL_ESCAPE_LEN &&
		    memcmp(text + i, json_nul_escape, JSON_NUL_ESCAPE_LEN) == 0) {
			memcpy(out + n, JSON_NUL, JSON_NUL_LEN);
			n += JSON_NUL_LEN;
			i += JSON_NUL_ESCAPE_LEN - 1;
			continue;
		}
		out[n++] = c;
		if (in_string && c == '\\' && i + 1 < len)
			out[n++] = text[++i]; /* an escaped quote or backslash */
		else if (c == '"')
			in_string = !in_string;
	}
	out[n] = '\0';
	*out_len = n;
	return out;
}

static bool json_only_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return false;
	return true;
}

cJSON *json_parse(const char *text, size_t len, bool whole)
{
	const char *end = NULL;
	char *copy = NULL;
	cJSON *item;

	if (!text || json_find_pair(text, len))
		return NULL;
	if (json_has_nul_escape(text, len)) {
		copy = json_nul_rewrite(text, len, &len);
		if (!copy)
			return NULL;
		text = copy;
	}
	item = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (item && whole && !json_only_space(end, text + len)) {
		cJSON_Delete(item);
		item = NULL;
	}
	free(copy);
	return item;
}

/* text with each JSON_NUL written as \u0000, in a new allocation; text is
 * freed either way.  cJSON writes bytes of 0x80 and above as they are, and
 * only inside strings, so every pair found is a decoded U+0000. */
static char *json_nul_restore(char *text)
{
	size_t len = strlen(text), pairs = 0, n = 0;
	char *out;

	for (const char *p = text; (p = json_find_pair(p, len - (size_t)(p - text)));
	     p += JSON_NUL_LEN)
		pairs++;
	out = malloc(len + pairs * (JSON_NUL_ESCAPE_LEN - JSON_NUL_LEN) + 1);
	for (size_t i = 0; out && i < len; i++) {
		if (memcmp(text + i, JSON_NUL, JSON_NUL_LEN) == 0) {
			memcpy(out + n, json_nul_escape, JSON_NUL_ESCAPE_LEN);
			n += JSON_NUL_ESCAPE_LEN;
			i++;
		} else {
			out[n++] = text[i];
		}
	}
	if (out)
		out[n] = '\0';
	free(text);
	return out;
}

char *json_print(const cJSON *item, bool pretty)
{
	char *text = pretty ? cJSON_Print(item) : cJSON_PrintUnformatted(item);

	if (!text || !json_find_pair(text, strlen(text)))
		return text;
	return json_nul_restore(text);
}
