/*
 * evfile.h - a JSONL file of events, loaded whole for publishing.
 *
 * The file is read into one buffer; each line becomes an entry pointing at
 * its JSON text and at the 64 hex characters of its id, so a publisher can
 * send ["EVENT",<line>] and match the OK without parsing anything.  Empty
 * lines are skipped; a line without an "id" field is an error.
 */
#ifndef BENCH_EVFILE_H
#define BENCH_EVFILE_H

#include <stddef.h>
#include <stdint.h>

struct evline {
	const char *json; /* not NUL-terminated */
	uint32_t len;
	const char *id; /* 64 hex characters inside json */
};

struct evfile {
	char *data;
	size_t size;
	struct evline *lines;
	size_t count;
};

/* Loads path into *f.  Returns 0, ERR_IO (errno set) or ERR_INVAL (a line
 * without an id; the message names it on stderr), or ERR_NOMEM. */
int evfile_load(const char *path, struct evfile *f);

/* Frees what evfile_load() allocated.  NULL-safe on a zeroed struct. */
void evfile_free(struct evfile *f);

#endif
