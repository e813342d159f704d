/*
 * tmpdir.h - a private temporary directory for a unit test's files.
 *
 * Header-only (static functions) so every check suite can include it
 * without a library of its own.  tmpdir_make() creates
 * /tmp/<prefix>-XXXXXX with mkdtemp() and aborts the test program if it
 * cannot (nothing meaningful can run then); tmpdir_remove() deletes the
 * files in it (not subdirectories: no test makes any) and the directory.
 *
 * Most suites make one directory per test process (an unchecked fixture)
 * and remove it with whatever is left in it, so a failing test, whose forked
 * child exits before its teardown, leaves no litter in /tmp: TMPDIR_SUITE()
 * declares that directory and the fixture pair, and tmpdir_file() names a
 * fresh file in it for each test.
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

/* A fresh name for the current test's file: dir/<pid>-<n><ext>. */
static inline void tmpdir_file(char *path, size_t len, const char *dir, const char *ext)
{
	static unsigned n;

	snprintf(path, len, "%s/%ld-%u%s", dir, (long)getpid(), n++, ext);
}

/* Declares `tmp_dir` and the unchecked fixture pair tmp_dir_setup() /
 * tmp_dir_teardown() that make /tmp/<prefix>-XXXXXX and remove it. */
#define TMPDIR_SUITE(prefix)                                                              \
	static char tmp_dir[TMPDIR_PATH_MAX];                                             \
	static void tmp_dir_setup(void)                                                   \
	{                                                                                 \
		tmpdir_make(tmp_dir, prefix);                                             \
	}                                                                                 \
	static void tmp_dir_teardown(void)                                                \
	{                                                                                 \
		tmpdir_remove(tmp_dir);                                                   \
	}

/* Room for tmp_dir plus "/<pid>-<n>" and a short extension. */
#define TMPDIR_FILE_MAX (TMPDIR_PATH_MAX + 32)

#endif
