#!/bin/sh
# run.sh BUILD CONFIG - `make run`: starts stored and the configured number of
# relayd workers in the foreground, prints the URL once every worker that
# started listens and has reached stored, and stops them all on Ctrl-C or
# SIGTERM (each gets SIGTERM and is waited for).  It exits 1, without the
# URL, when stored refuses to start (a bad config, its port already served
# by another stored) or when no worker could listen.
set -u
build=$1
config=$2

value() {
	v=$(sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\([^#]*\).*/\1/p" "$config" | tail -n 1 | sed 's/[[:space:]]*$//')
	[ -n "$v" ] && echo "$v" || echo "$2"
}

workers=$(value workers 2)
bind=$(value bind 127.0.0.1)
port=$(value port 7777)
run_dir=$(value run_dir ./var/run)
url=$(sh "$(dirname "$0")/local-url.sh" "$bind" "$port")

fail() {
	echo "make run: $1" >&2
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	wait
	exit 1
}

"$build/stored" -c "$config" &
stored=$!
pids=$stored
# Workers dial stored in the background, but waiting for its socket keeps
# the first client from meeting "storage unavailable".
tries=0
while [ ! -S "$run_dir/stored-rpc.ipc" ] && [ $tries -lt 100 ]; do
	kill -0 "$stored" 2>/dev/null || fail "stored did not start (its reason is above); nothing runs"
	sleep 0.05
	tries=$((tries + 1))
done
i=1
wpids=
while [ "$i" -le "$workers" ]; do
	"$build/relayd" -c "$config" -i "$i" &
	wpids="$wpids $!"
	i=$((i + 1))
done
pids="$pids$wpids"

stop() {
	trap - INT TERM
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	wait
	exit 0
}
trap stop INT TERM

# How many workers stored lists: each has bound the port and reached it.
reached() {
	"$build/relayctl" -c "$config" --json workers 2>/dev/null | grep -o '"worker":' | wc -l
}
alive() {
	n=0
	for p in $wpids; do
		kill -0 "$p" 2>/dev/null && n=$((n + 1))
	done
	echo $n
}

# Until every live worker is listed (a worker that cannot listen exits),
# for at most 30 s.
tries=0
while :; do
	kill -0 "$stored" 2>/dev/null || fail "stored stopped while the workers started (its reason is above)"
	up=$(alive)
	[ "$up" -eq 0 ] && fail "no worker could listen on $bind port $port (the reason is above); stopping"
	[ "$(reached)" -ge "$up" ] && break
	[ $tries -ge 600 ] && fail "the workers did not reach stored within 30 s; stopping"
	sleep 0.05
	tries=$((tries + 1))
done
[ "$up" -lt "$workers" ] && echo "make run: only $up of $workers workers listen (the reason is above)" >&2
echo "relay: $url ($up workers; Ctrl-C stops)"
wait
