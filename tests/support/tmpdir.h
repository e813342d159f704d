/*
 * tmpdir.h - a private temporary directory for a unit test's files.
 *
 * Header-only (static functions) so every check suite can include it
 * without a library of its own.  tmpdir_make() creates
 * /tmp/<prefix>-XXXXXX with mkdtemp() and aborts the test program if it
 * cannot (nothing meaningful can run then); tmpdir_remove() deletes the
 * files in it (not subdirectories: no test makes any) and the directory.
 */
#ifndef TESTS_SUPPORT_TMPDIR_H
#define TESTS_SUPPORT_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TMPDIR_PATH_MAX 128

static inline void tmpdir_make(char dir[TMPDIR_PATH_MAX], const char *prefix)
{
	snprintf(dir, TMPDIR_PATH_MAX, "/tmp/%s-XXXXXX", prefix);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
}

static inline void tmpdir_remove(const char *dir)
{
	char path[TMPDIR_PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

#endif
