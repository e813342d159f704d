/* jsonstr.c - NIP-01 JSON string escaping (see jsonstr.h). */
#include "jsonstr.h"

#include <string.h>

#include "buf.h"
#include "err.h"

/* The escape for c, or NULL when c is written as itself. */
static const char *jsonstr_escape_of(unsigned char c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	case '\b': return "\\b";
	case '\f': return "\\f";
	default: return NULL;
	}
}

/* The wire form also escapes the control characters NIP-01 leaves raw. */
static const char *jsonstr_wire_escape_of(unsigned char c, char spare[7])
{
	static const char digits[] = "0123456789abcdef";
	const char *esc = jsonstr_escape_of(c);

	if (esc || c >= 0x20)
		return esc;
	memcpy(spare, "\\u00", 4);
	spare[4] = digits[c >> 4];
	spare[5] = digits[c & 15];
	spare[6] = '\0';
	return spare;
}

static int jsonstr_write(struct buf *out, const char *s, size_t len, int wire)
{
	size_t run = 0;
	char spare[7];

	/* Worst case every byte becomes \u00XX; reserving once keeps the loop simple. */
	if (buf_reserve(out, 6 * len + 2))
		return ERR_NOMEM;
	buf_append_byte(out, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = wire ? jsonstr_wire_escape_of(c, spare) : jsonstr_escape_of(c);

		if (!esc)
			continue;
		buf_append(out, s + run, i - run);
		buf_append(out, esc, strlen(esc));
		run = i + 1;
	}
	buf_append(out, s + run, len - run);
	buf_append_byte(out, '"');
	return 0;
}

int jsonstr_append(struct buf *out, const char *s, size_t len)
{
	return jsonstr_write(out, s, len, 0);
}

int jsonstr_append_wire(struct buf *out, const char *s, size_t len)
{
	return jsonstr_write(out, s, len, 1);
}

bool jsonstr_has_nul_escape(const char *json, size_t len)
{
	bool in_string = false;

	if (!memmem(json, len, "\\u0000", 6))
		return false; /* the common case: one fast look */
	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = json[i] == '"';
		} else if (json[i] == '"') {
			in_string = false;
		} else if (json[i] == '\\') {
			if (len - i >= 6 && memcmp(json + i + 1, "u0000", 5) == 0)
				return true;
			i++; /* the escaped character, which may be a quote or a backslash */
		}
	}
	return false;
}
