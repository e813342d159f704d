/* version.c - the build's version and commit (see version.h). */
#include "version.h"

/* The Makefile defines it from `git rev-parse` for this file alone, so a
 * new commit recompiles one object; other builds (fuzzing) get "unknown". */
#ifndef RELAY_COMMIT
#define RELAY_COMMIT "unknown"
#endif

const char *version_commit(void)
{
	return RELAY_COMMIT[0] ? RELAY_COMMIT : "unknown";
}

void version_print(FILE *out, const char *program)
{
	fprintf(out, "%s %s (commit %s)\n", program, RELAY_VERSION, version_commit());
}
