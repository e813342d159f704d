#!/bin/bash
# run.sh BUILD - `make test-systemd`: the relay under a real systemd.
#
# Boots Debian 12 with systemd in a container (systemd-nspawn -b), installs
# the built relay into it with `make install DESTDIR=<root>`, and runs
# systemd.test.mjs, which drives systemctl in the container through nsenter
# and speaks websocket to the relay from this side (the container shares
# this machine's network namespace, so its loopback is ours).
#
# The container's root is made once with debootstrap (minbase plus systemd,
# dbus, procps and the libraries the binaries link) into
# $CRELAY_NSPAWN_CACHE/bookworm (/var/cache/crelay-nspawn/bookworm unless
# set) and reused while its package list is unchanged; each run boots a
# fresh copy of it.  The first build downloads
# the packages from the Debian mirror this machine's apt uses and takes two
# to four minutes (bounded at DEBOOTSTRAP_TIMEOUT, 1200 s); a cached run
# takes about 20 seconds.  Every step is bounded, and the container and the
# copy are removed on any exit.
#
# Needs root (debootstrap, systemd-nspawn, nsenter) and installs the
# Debian packages debootstrap and systemd-container if they are missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build_arg=${1:-build} # as the Makefile names it (relative to the top)
build=$(cd "$top" && realpath "$build_arg")
cache_root=${CRELAY_NSPAWN_CACHE:-/var/cache/crelay-nspawn}
cache=$cache_root/bookworm
debootstrap_timeout=${DEBOOTSTRAP_TIMEOUT:-1200}
boot_timeout=120
test_timeout=600
machine=crelaytest

work=
nspawn_pid=
leader=
driver_pid=

say() {
	printf 'test-systemd: %s\n' "$*"
}

die() {
	say "FAIL: $*" >&2
	exit 1
}

require_root() {
	[ "$(id -u)" -eq 0 ] ||
		die "needs root: debootstrap, systemd-nspawn and nsenter do (run it as root)"
}

# Installs the host tools, only when missing.
host_packages() {
	local missing=()
	command -v debootstrap >/dev/null || missing+=(debootstrap)
	command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
	if [ ${#missing[@]} -eq 0 ]; then
		say "host packages present (debootstrap, systemd-container)"
		return
	fi
	say "installing missing host packages: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; } ||
		die "apt-get install ${missing[*]} failed"
}

# The Debian mirror apt uses here (first deb source naming bookworm).
mirror() {
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { u = $2 } /^Suites:.*bookworm( |$)/ && u { print u; exit }')
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	echo "${m:-http://deb.debian.org/debian}"
}

# The Debian packages the built binaries load, found through the host's
# dpkg database (host and container are both bookworm).
runtime_packages() {
	ldd "$build/stored" "$build/relayd" "$build/relayctl" |
		awk '/=> \// { print $3 }' | sort -u |
		while read -r lib; do
			dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null || true
		done | sed 's/:.*//' | sort -u
}

packages() {
	{
		printf '%s\n' systemd dbus procps libwebsockets17 libcjson1 libsecp256k1-1 libsqlite3-0 libnng1
		# libwebsockets loads its libev plugin with dlopen(), so ldd
		# does not see it; relayd cannot start without it.
		printf '%s\n' libwebsockets-evlib-ev
		runtime_packages
	} | sort -u | paste -sd, -
}

# Builds the cached root unless one with the same package list exists.
cached_root() {
	local want have tmp
	# One run at a time builds or checks the cache; the lock goes with the
	# script (fd 9 stays open until exit).
	mkdir -p "$cache_root"
	exec 9>"$cache_root/.lock"
	flock -w "$((debootstrap_timeout + 60))" 9 || die "another run holds $cache_root/.lock"
	want=$(packages)
	have=$(cat "$cache/.crelay-packages" 2>/dev/null || true)
	if [ -x "$cache/usr/lib/systemd/systemd" ] && [ "$want" = "$have" ]; then
		say "reusing the container root in $cache"
		return
	fi
	tmp=$cache.tmp
	rm -rf "$tmp"
	say "building a Debian 12 root in $cache with debootstrap (first run only;" \
		"2 to 4 minutes, at most ${debootstrap_timeout}s); packages: $want"
	if ! timeout "$debootstrap_timeout" debootstrap --variant=minbase --include="$want" \
		bookworm "$tmp" "$(mirror)" >"$cache_root/debootstrap.log" 2>&1; then
		tail -n 20 "$cache_root/debootstrap.log" >&2
		rm -rf "$tmp"
		die "debootstrap failed (log: $cache_root/debootstrap.log)"
	fi
	echo "$want" >"$tmp/.crelay-packages"
	rm -rf "$cache"
	mv "$tmp" "$cache"
}

# A fresh copy of the cached root with the relay installed and configured.
prepare_root() {
	local root=$1 port=$2
	cp -a --reflink=auto "$cache" "$root"
	make -C "$top" --no-print-directory install DESTDIR="$root" BUILD="$build_arg" >"$work/install.log" 2>&1 ||
		{ cat "$work/install.log" >&2; die "make install DESTDIR=$root failed"; }
	chroot "$root" useradd --system --user-group --home-dir /var/lib/crelay --no-create-home \
		--shell /usr/sbin/nologin crelay
	sed -i -e "s/^port = .*/port = $port/" -e "s/^bind = .*/bind = 127.0.0.1/" \
		"$root/etc/crelay/relay.conf"
	grep -q "^port = $port\$" "$root/etc/crelay/relay.conf" || die "could not set the port"
	# systemctl forgets a cleanly stopped unit's exit status at once; this
	# test-only drop-in logs it to the journal, where the test reads it.  The
	# line names its run: journald files a line of a unit restarted at once
	# under whichever run the unit has when it reads the line, often the
	# new one.
	local u
	for u in stored.service relayd@.service; do
		mkdir -p "$root/etc/systemd/system/$u.d"
		cat >"$root/etc/systemd/system/$u.d/test-exit.conf" <<-'EOF'
			# written by tests/systemd/run.sh: logs how the main process ended
			[Service]
			ExecStopPost=/bin/sh -c 'echo "test-exit: $$EXIT_CODE $$EXIT_STATUS ($$INVOCATION_ID)"'
		EOF
	done
}

free_port() {
	node -e 'const s = require("net").createServer();
		s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

in_container() {
	nsenter -t "$leader" -a --root --wd "$@"
}

# Starts the container and waits (bounded) until its systemd has booted.
boot() {
	local root=$1 i
	# --register=no and --keep-unit: this machine's init is not systemd, so
	# there is no machined to register with and no manager to create a scope.
	systemd-nspawn -b -D "$root" --machine="$machine" --register=no --keep-unit \
		--console=read-only </dev/null >"$work/console.log" 2>&1 &
	nspawn_pid=$!
	for ((i = 0; i < boot_timeout * 10; i++)); do
		leader=$(pgrep -P "$nspawn_pid" -x systemd || true)
		[ -n "$leader" ] && break
		kill -0 "$nspawn_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$leader" ]; then
		cat "$work/console.log" >&2
		die "the container did not start (systemd-nspawn output above)"
	fi
	# Until the manager's bus socket exists, systemctl cannot connect at all.
	local state=
	for ((i = 0; i < boot_timeout * 5; i++)); do
		state=$(timeout 10 nsenter -t "$leader" -a --root --wd systemctl is-system-running 2>&1 || true)
		case $state in running | degraded | maintenance | stopping | offline) break ;; esac
		kill -0 "$nspawn_pid" 2>/dev/null || break
		sleep 0.2
	done
	case $state in
	running) say "container booted (systemd pid $leader on this side)" ;;
	degraded)
		say "container booted degraded; failed units:"
		in_container systemctl --failed --no-pager --no-legend || true
		;;
	*)
		tail -n 40 "$work/console.log" >&2
		die "the container's systemd did not finish booting in ${boot_timeout}s: '$state'"
		;;
	esac
}

# Halts the container (SIGTERM to nspawn asks its systemd to power off),
# then kills what is left, and removes the copy.  Runs on every exit.
cleanup() {
	local rc=$? i
	set +e
	if [ -n "$driver_pid" ]; then
		kill -TERM "$driver_pid" 2>/dev/null
		wait "$driver_pid" 2>/dev/null
	fi
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		kill -TERM "$nspawn_pid"
		for ((i = 0; i < 300; i++)); do
			kill -0 "$nspawn_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$nspawn_pid" 2>/dev/null; then
			say "container did not halt in 30s; killing it"
			[ -n "$leader" ] && kill -KILL "$leader" 2>/dev/null
			kill -KILL "$nspawn_pid" 2>/dev/null
		fi
		wait "$nspawn_pid" 2>/dev/null
	fi
	if [ -n "$work" ] && [ -d "$work" ]; then
		if grep -qF " $work/" /proc/self/mountinfo; then
			say "not removing $work: something is still mounted under it"
		else
			rm -rf "$work"
		fi
	fi
	exit "$rc"
}

main() {
	local started=$SECONDS root port
	require_root
	host_packages
	local b
	for b in stored relayd relayctl; do
		[ -x "$build/$b" ] || die "no $build/$b (run make first)"
	done
	cached_root
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	mkdir -p /var/tmp
	work=$(mktemp -d /var/tmp/crelay-nspawn.XXXXXX)
	root=$work/root
	port=$(free_port)
	prepare_root "$root" "$port"
	say "relay installed in $root, port $port; booting it"
	boot "$root"
	# In the background, so that a signal to this script is handled at once.
	CRELAY_CT_LEADER=$leader CRELAY_CT_PORT=$port \
		timeout "$test_timeout" node --test --test-concurrency=1 "$here/systemd.test.mjs" &
	driver_pid=$!
	wait "$driver_pid"
	driver_pid=
	say "done in $((SECONDS - started))s"
}

main
