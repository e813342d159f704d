#!/bin/sh
# run.sh BUILD - the browser test of the status page.  Installs Debian's
# chromium if it is missing (only this test needs it), then runs the test
# with Node's test runner against the relay built in BUILD.
set -eu
build=$(cd "$1" && pwd)
if ! command -v chromium >/dev/null 2>&1; then
	echo "test-browser: installing Debian's chromium (used only by this test)"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium
fi
cd "$(dirname "$0")"
RELAY_BUILD="$build" node --test --test-concurrency=1 status-page.test.mjs
