/* buf.c - growable byte buffer (see buf.h). */
#include "buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

int buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap = b->cap ? b->cap : 64;
	char *grown;

	if (extra > SIZE_MAX - b->len - 1)
		return ERR_NOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	grown = realloc(b->data, cap);
	if (!grown)
		return ERR_NOMEM;
	b->data = grown;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	if (buf_reserve(b, len))
		return ERR_NOMEM;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_append_byte(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

int buf_append_int(struct buf *b, int64_t v)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRId64, v);

	return buf_append(b, digits, (size_t)n);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

char *buf_take(struct buf *b)
{
	char *data = b->data;

	if (!data)
		data = calloc(1, 1);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return data;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}
