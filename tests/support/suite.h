/*
 * suite.h - running a check suite from a test program's main().
 *
 * Header-only, like tmpdir.h.  suite_run() runs every test of s (forked,
 * as check does by default), prints check's summary and returns the exit
 * status for main: EXIT_FAILURE if any test failed.
 */
#ifndef TESTS_SUPPORT_SUITE_H
#define TESTS_SUPPORT_SUITE_H

#include <check.h>
#include <stdlib.h>

static inline int suite_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
