/* jsonstr.c - NIP-01 JSON string escaping (see jsonstr.h). */
#include "jsonstr.h"

#include <string.h>

#include "buf.h"
#include "err.h"
#include "json.h"

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

/* True when s[i] starts JSON_NUL, a decoded U+0000 (json.h). */
static bool jsonstr_is_nul_at(const char *s, size_t len, size_t i)
{
	return (unsigned char)s[i] == 0xc0 && i + 1 < len && (unsigned char)s[i + 1] == 0x80;
}

/* What replaces the character at s[i], and its length in *esc_len; NULL
 * when the byte goes out as itself.  *step is how many bytes it covers. */
static const char *jsonstr_replacement(const char *s, size_t len, size_t i, int wire,
				       char spare[7], size_t *esc_len, size_t *step)
{
	static const char raw_nul[1] = { '\0' };
	unsigned char c = (unsigned char)s[i];
	const char *esc;

	*step = 1;
	if (c == 0xc0 && jsonstr_is_nul_at(s, len, i)) {
		*step = 2;
		*esc_len = wire ? 6 : 1;
		return wire ? "\\u0000" : raw_nul;
	}
	esc = wire ? jsonstr_wire_escape_of(c, spare) : jsonstr_escape_of(c);
	if (esc)
		*esc_len = strlen(esc);
	return esc;
}

/* Bytes that may need more than themselves: controls, the quote and
 * backslash, and 0xc0 (which may start a decoded U+0000).  Every other
 * byte is copied, so the loop looks no further at it. */
static const unsigned char jsonstr_special[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0xc0] = 1,
};

static int jsonstr_write(struct buf *out, const char *s, size_t len, int wire)
{
	size_t run = 0, esc_len = 0, step;
	char spare[7];

	/* Worst case every byte becomes \u00XX; reserving once keeps the loop simple. */
	if (buf_reserve(out, 6 * len + 2))
		return ERR_NOMEM;
	buf_append_byte(out, '"');
	for (size_t i = 0; i < len; i += step) {
		const char *esc;

		step = 1;
		if (!jsonstr_special[(unsigned char)s[i]])
			continue;
		esc = jsonstr_replacement(s, len, i, wire, spare, &esc_len, &step);
		if (!esc)
			continue;
		buf_append(out, s + run, i - run);
		buf_append(out, esc, esc_len);
		run = i + step;
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

bool jsonstr_forms_differ(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && !jsonstr_escape_of(c)) || jsonstr_is_nul_at(s, len, i))
			return true;
	}
	return false;
}

size_t jsonstr_decoded_len(const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	size_t n = len;

	while ((p = memmem(p, (size_t)(end - p), JSON_NUL, JSON_NUL_LEN))) {
		p += JSON_NUL_LEN;
		n--;
	}
	return n;
}
