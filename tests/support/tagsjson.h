/*
 * tagsjson.h - the "tags" member of an event's JSON for the tag rows a
 * test gives ingest_event() through event_build().
 *
 * Header-only, like testdb.h.  Deleting an event takes its tag rows
 * through the tags its JSON names (stored/tags_schema.h), so an event a
 * test builds by hand carries them in its JSON as a parsed one would.
 * tagsjson_append() writes `"tags":[["t","x"],...]` at out[*len] (size
 * bytes in all) and advances *len; a value's U+0000 (JSON_NUL, or a raw
 * zero byte) is written as \u0000, and the test fails if out is too small.
 */
#ifndef TESTS_SUPPORT_TAGSJSON_H
#define TESTS_SUPPORT_TAGSJSON_H

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../common/event.h"

static inline void tagsjson_put(char *out, size_t size, size_t *len, const char *s, size_t n)
{
	ck_assert_uint_lt(*len + n, size);
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
}

static inline void tagsjson_append(char *out, size_t size, size_t *len,
				   const struct event_tag *tags, uint32_t ntags)
{
	tagsjson_put(out, size, len, "\"tags\":[", 8);
	for (uint32_t i = 0; i < ntags; i++) {
		char head[8];

		snprintf(head, sizeof(head), "%s[\"%c\",\"", i ? "," : "", tags[i].name);
		tagsjson_put(out, size, len, head, strlen(head));
		for (uint32_t k = 0; k < tags[i].value_len; k++) {
			char c = tags[i].value[k];

			if ((unsigned char)c == 0xc0 && k + 1 < tags[i].value_len &&
			    (unsigned char)tags[i].value[k + 1] == 0x80) {
				tagsjson_put(out, size, len, "\\u0000", 6);
				k++;
			} else if (c == '\0')
				tagsjson_put(out, size, len, "\\u0000", 6);
			else if (c == '"' || c == '\\')
				tagsjson_put(out, size, len, (char[]){ '\\', c }, 2);
			else
				tagsjson_put(out, size, len, &c, 1);
		}
		tagsjson_put(out, size, len, "\"]", 2);
	}
	tagsjson_put(out, size, len, "]", 1);
}

#endif
