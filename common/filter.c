/*
 * filter.c - struct filter lifetime: init, copy, free.
 * Parsing from JSON is in filter_parse.c, matching in filter_match.c.
 */
#include "filter.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

void filter_init(struct filter *f)
{
	memset(f, 0, sizeof(*f));
	f->since = INT64_MIN;
	f->until = INT64_MAX;
}

static void filter_tag_free(struct filter_tag *t)
{
	for (uint32_t i = 0; i < t->nvalues; i++)
		free(t->values[i]);
	free(t->values);
	free(t->lens);
}

void filter_free(struct filter *f)
{
	if (!f)
		return;
	free(f->ids);
	free(f->authors);
	free(f->kinds);
	for (uint32_t i = 0; i < f->ntags; i++)
		filter_tag_free(&f->tags[i]);
	free(f->tags);
	free(f->search);
	filter_init(f);
}

void filters_free(struct filter *filters, uint32_t n)
{
	if (!filters)
		return;
	for (uint32_t i = 0; i < n; i++)
		filter_free(&filters[i]);
	free(filters);
}

static void *filter_dup_bytes(const void *src, size_t len, int *failed)
{
	void *copy;

	if (!src || len == 0)
		return NULL;
	copy = malloc(len);
	if (!copy) {
		*failed = 1;
		return NULL;
	}
	memcpy(copy, src, len);
	return copy;
}

static int filter_tag_copy(struct filter_tag *dst, const struct filter_tag *src)
{
	int failed = 0;

	memset(dst, 0, sizeof(*dst));
	dst->name = src->name;
	dst->values = calloc(src->nvalues ? src->nvalues : 1, sizeof(char *));
	dst->lens = filter_dup_bytes(src->lens, src->nvalues * sizeof(uint32_t), &failed);
	if (!dst->values || failed)
		return ERR_NOMEM;
	for (uint32_t i = 0; i < src->nvalues; i++) {
		dst->values[i] = malloc(src->lens[i] + 1);
		if (!dst->values[i])
			return ERR_NOMEM;
		dst->nvalues = i + 1;
		memcpy(dst->values[i], src->values[i], src->lens[i] + 1);
	}
	return 0;
}

int filter_copy(struct filter *dst, const struct filter *src)
{
	int failed = 0;

	*dst = *src;
	dst->ids = filter_dup_bytes(src->ids, src->nids * 32u, &failed);
	dst->authors = filter_dup_bytes(src->authors, src->nauthors * 32u, &failed);
	dst->kinds = filter_dup_bytes(src->kinds, src->nkinds * sizeof(uint32_t), &failed);
	dst->search = src->search ? strdup(src->search) : NULL;
	dst->tags = NULL;
	dst->ntags = 0;
	if (failed || (src->search && !dst->search))
		goto fail;
	if (src->ntags) {
		dst->tags = calloc(src->ntags, sizeof(*dst->tags));
		if (!dst->tags)
			goto fail;
		for (uint32_t i = 0; i < src->ntags; i++) {
			dst->ntags = i + 1;
			if (filter_tag_copy(&dst->tags[i], &src->tags[i]))
				goto fail;
		}
	}
	return 0;
fail:
	filter_free(dst);
	return ERR_NOMEM;
}
