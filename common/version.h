/*
 * version.h - the relay's version and the commit it was built from.
 *
 * RELAY_VERSION is the one place the version is set: --version, NIP-11's
 * "version" and the relay_build_info metric all read it.  The commit comes
 * from git when the Makefile builds common/version.c, and is "unknown" in
 * a tree without .git (a release tarball).
 */
#ifndef COMMON_VERSION_H
#define COMMON_VERSION_H

#include <stdio.h>

#define RELAY_VERSION "0.1.0"

/* The short commit hash the binary was built from, or "unknown".  A
 * static string; never NULL. */
const char *version_commit(void);

/* Writes "PROGRAM VERSION (commit COMMIT)" and a newline to out, for
 * --version. */
void version_print(FILE *out, const char *program);

#endif
