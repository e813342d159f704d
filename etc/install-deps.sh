#!/bin/sh
# install-deps.sh - installs the Debian 12 packages the build and tests need,
# and only those that are missing.  Then warns when the node found is too
# old for the tests, which need 18.19 or later (Debian 12 ships 18.20);
# `make run` needs no node.
# Idempotent: on a machine that has it all it prints nothing and changes
# nothing.  Run by `make deps`, which `make run` and `make test` depend on.
set -eu

packages="gcc make pkg-config libc6-dev libssl-dev libwebsockets-dev libwebsockets-evlib-ev libev-dev libcjson-dev \
libsecp256k1-dev libsqlite3-dev libnng-dev nng-utils check zlib1g-dev nodejs npm nginx-light openssl"

missing=""
for p in $packages; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		# nodejs may come from elsewhere with npm bundled; a working node+npm is enough.
		if { [ "$p" = nodejs ] || [ "$p" = npm ]; } && command -v "${p%js}" >/dev/null 2>&1; then
			continue
		fi
		missing="$missing $p"
	fi
done

# apt_install: installs $missing with apt-get, as root or through sudo.
apt_install() {
	echo "install-deps: installing missing Debian packages:$missing"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			sudo=sudo
		else
			echo "install-deps: not root and no sudo; install these by hand:$missing" >&2
			return 1
		fi
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	# shellcheck disable=SC2086
	$sudo apt-get install -y -qq --no-install-recommends $missing
}

if [ -n "$missing" ]; then
	apt_install
fi
# node_ok: true when node runs and is 18.19 or later (--test-concurrency).
node_ok() {
	node -e 'const [a, b] = process.versions.node.split(".").map(Number);
process.exit(a > 18 || (a === 18 && b >= 19) ? 0 : 1)' 2>/dev/null
}

if ! node_ok; then
	echo "install-deps: warning: the tests need Node 18.19 or later; found: $(node --version 2>&1 || echo none)" >&2
fi
