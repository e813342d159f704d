#!/bin/sh
# run.sh BUILD COMMAND... - runs COMMAND with Debian 12's own Node 18 first
# in PATH, however new the machine's node is.
#
# The packages (nodejs, libnode108 and what they load) are fetched once with
# `apt-get download` into BUILD/node18/debs and unpacked with `dpkg -x` into
# BUILD/node18/root; nothing is installed.  Debian's libnode loads acorn,
# cjs-module-lexer and undici from /usr/share/nodejs by absolute path.  So
# COMMAND runs in a mount namespace of its own (unshare, root only) where an
# overlay puts the unpacked /usr/share under the real one.  The machine's
# /usr stays as it was for every other process.
#
# Exits with COMMAND's status; 1 when the packages cannot be had.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 BUILD COMMAND..." >&2; exit 2; }
build=$(mkdir -p "$1" && cd "$1" && pwd)
shift
dir=$build/node18
root=$dir/root
# The libraries libnode108 links that a Debian 12 base may lack, and the
# three builtins it loads from /usr/share/nodejs.
extra="libuv1 libc-ares2 node-acorn node-cjs-module-lexer node-undici"

say() {
	printf 'node18: %s\n' "$*"
}

# The newest 18.x of nodejs that apt knows (Debian 12's own, not a
# third-party repository's 20).
debian_version() {
	apt-cache madison nodejs | awk -F'|' '$2 ~ /^ *18\./ { gsub(/ /, "", $2); print $2; exit }'
}

fetch() {
	[ -x "$root/usr/bin/node" ] && return 0
	version=$(debian_version)
	if [ -z "$version" ]; then
		apt-get update -qq
		version=$(debian_version)
	fi
	[ -n "$version" ] || { say "apt knows no nodejs 18 (is this Debian 12?)"; exit 1; }
	say "fetching Debian's nodejs $version into $dir"
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	# apt's sandbox user may not write here; apt then downloads as root.
	(cd "$dir/debs" && apt-get download -qq "nodejs=$version" "libnode108=$version" $extra 2>&1 |
		grep -v "^W: Download is performed unsandboxed" >&2 || true)
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/unpack"
	done
	mkdir -p "$dir/bin"
	ln -sf ../root/usr/bin/node "$dir/bin/node"
	mv "$dir/unpack" "$root"
	[ -x "$root/usr/bin/node" ] || { say "no usr/bin/node in the packages"; exit 1; }
}

[ "$(id -u)" = 0 ] || { say "needs root (unshare and mount)"; exit 1; }
fetch
libnode=$(find "$root/usr/lib" -name 'libnode.so.*' | head -n 1)
export LD_LIBRARY_PATH="$(dirname "$libnode")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$dir/bin:$PATH"
# shellcheck disable=SC2016
exec unshare --mount sh -c 'mount --make-rprivate / &&
	mount -t overlay overlay -o "lowerdir=$0/usr/share:/usr/share" /usr/share &&
	exec "$@"' "$root" "$@"
