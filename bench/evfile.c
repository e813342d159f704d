/* evfile.c - loading a JSONL event file (see evfile.h). */
#include "evfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/err.h"

static int evfile_read(const char *path, struct evfile *f)
{
	FILE *in = fopen(path, "rb");
	struct stat st;

	if (!in)
		return ERR_IO;
	if (fstat(fileno(in), &st)) {
		fclose(in);
		return ERR_IO;
	}
	f->size = (size_t)st.st_size;
	f->data = malloc(f->size + 1);
	if (!f->data || fread(f->data, 1, f->size, in) != f->size) {
		fclose(in);
		return f->data ? ERR_IO : ERR_NOMEM;
	}
	fclose(in);
	f->data[f->size] = '\0';
	return 0;
}

/* Finds the id value in line; NULL when there is none. */
static const char *evfile_id(const char *json, size_t len)
{
	const char *p = memmem(json, len, "\"id\":\"", 6);

	if (!p || (size_t)(p + 6 + 64 - json) > len)
		return NULL;
	return p + 6;
}

static int evfile_split(struct evfile *f)
{
	size_t cap = 1024;
	char *p = f->data, *end = f->data + f->size;

	f->lines = malloc(cap * sizeof(*f->lines));
	if (!f->lines)
		return ERR_NOMEM;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len && p[len - 1] == '\r')
			len--;
		if (len) {
			const char *id = evfile_id(p, len);

			if (!id) {
				fprintf(stderr, "loadgen: event %zu has no id\n", f->count + 1);
				return ERR_INVAL;
			}
			if (f->count == cap) {
				struct evline *grown = realloc(f->lines, 2 * cap * sizeof(*grown));

				if (!grown)
					return ERR_NOMEM;
				f->lines = grown;
				cap *= 2;
			}
			f->lines[f->count++] = (struct evline){ p, (uint32_t)len, id };
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int evfile_load(const char *path, struct evfile *f)
{
	int rc;

	memset(f, 0, sizeof(*f));
	rc = evfile_read(path, f);
	if (!rc)
		rc = evfile_split(f);
	if (rc)
		evfile_free(f);
	return rc;
}

void evfile_free(struct evfile *f)
{
	free(f->data);
	free(f->lines);
	memset(f, 0, sizeof(*f));
}
