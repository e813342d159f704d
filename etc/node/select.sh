#!/bin/sh
# select.sh - picks the node that the tests and lint scripts run.
#
#   sh etc/node/select.sh install   installs the pinned Node if needed
#   sh etc/node/select.sh path      prints "DIR:" to put first in PATH, or nothing
#
# The system node wins when it is 20 or later.  Otherwise `install` runs
# `npm ci` in tests/integration/.node on a copy of etc/node/ARCH/, whose
# lock pins node-linux-ARCH by version and sha512 (ARCH from uname -m).
# npm checks the tarball against that hash.  The tarball holds bin/node and
# runs no install script, so only the npm registry is reached.  `install`
# prints nothing when nothing changes.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
case "$(uname -m)" in
x86_64 | amd64) arch=x64 ;;
aarch64 | arm64) arch=arm64 ;;
*) arch= ;;
esac
pin="$root/etc/node/$arch"
dir="$root/tests/integration/.node"
bin="$dir/node_modules/.bin"
want=20

# node_major NODE: prints the major version of NODE, or 0 if it does not run.
node_major() {
	"$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

# system_ok: true when the node on PATH is new enough.
system_ok() {
	command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge "$want" ]
}

# local_ok: true when tests/integration/.node holds the pinned, working node.
local_ok() {
	cmp -s "$pin/package-lock.json" "$dir/package-lock.json" &&
		[ "$(node_major "$bin/node")" -ge "$want" ]
}

select_install() {
	system_ok && return 0
	local_ok && return 0
	if [ -z "$arch" ]; then
		echo "select.sh: no pinned Node for $(uname -m); install Node $want or later by hand" >&2
		return 0
	fi
	echo "select.sh: the system node is older than $want; installing the pinned one in tests/integration/.node"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$pin/package.json" "$pin/package-lock.json" "$dir/"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	if ! local_ok; then
		echo "select.sh: $bin/node does not run" >&2
		return 1
	fi
}

select_path() {
	if ! system_ok && [ -x "$bin/node" ]; then
		printf '%s:' "$bin"
	fi
}

case "${1:-}" in
install) select_install ;;
path) select_path ;;
*)
	echo "usage: $0 install|path" >&2
	exit 2
	;;
esac
