/* jsonstr.c - NIP-01 JSON string escaping (see jsonstr.h). */
#include "jsonstr.h"

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

int jsonstr_append(struct buf *out, const char *s, size_t len)
{
	size_t run = 0;

	/* Worst case every byte doubles; reserving once keeps the loop simple. */
	if (buf_reserve(out, 2 * len + 2))
		return ERR_NOMEM;
	buf_append_byte(out, '"');
	for (size_t i = 0; i < len; i++) {
		const char *esc = jsonstr_escape_of((unsigned char)s[i]);

		if (!esc)
			continue;
		buf_append(out, s + run, i - run);
		buf_append(out, esc, 2);
		run = i + 1;
	}
	buf_append(out, s + run, len - run);
	buf_append_byte(out, '"');
	return 0;
}
