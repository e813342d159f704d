#!/bin/sh
# run-unit.sh - runs each unit-test binary given, prints its check summary,
# and fails if any failed.  CK_FORK stays on so a crash fails one test only.
# A test's timeout is a guard against a hang, not a measure of speed: on a
# busy 2-core machine, or under a sanitizer, check's 4 s default is too short.
# A suite's own tcase_set_timeout() is scaled too: under two suites at once
# on both cores, a differential test needing 15 s of CPU took over 60 s.
: "${CK_DEFAULT_TIMEOUT:=60}"
: "${CK_TIMEOUT_MULTIPLIER:=5}"
export CK_DEFAULT_TIMEOUT CK_TIMEOUT_MULTIPLIER
failed=0
for t in "$@"; do
	echo "== $t"
	if ! "$t"; then
		failed=$((failed + 1))
	fi
done
if [ "$failed" -ne 0 ]; then
	echo "unit: $failed test binaries failed"
	exit 1
fi
echo "unit: all $# test binaries passed"
