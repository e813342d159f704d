#!/bin/sh
# run.sh BUILD CONFIG - `make run`: starts stored and the configured number of
# relayd workers in the foreground, prints the URL, and stops them all on
# Ctrl-C or SIGTERM (each gets SIGTERM and is waited for).
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

"$build/stored" -c "$config" &
pids=$!
# Workers dial stored in the background, but waiting for its socket keeps
# the first client from meeting "storage unavailable".  A stored that
# refused to start (a run_dir open to others, say) ends the run.
tries=0
while [ ! -S "$run_dir/stored-rpc.ipc" ] && [ $tries -lt 100 ]; do
	if ! kill -0 "$pids" 2>/dev/null; then
		wait "$pids"
		exit $?
	fi
	sleep 0.05
	tries=$((tries + 1))
done
i=1
while [ "$i" -le "$workers" ]; do
	"$build/relayd" -c "$config" -i "$i" &
	pids="$pids $!"
	i=$((i + 1))
done

stop() {
	trap - INT TERM
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	wait
	exit 0
}
trap stop INT TERM
echo "relay: $(sh "$(dirname "$0")/local-url.sh" "$bind" "$port") ($workers workers; Ctrl-C stops)"
wait
