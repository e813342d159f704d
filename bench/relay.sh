# shellcheck shell=bash
# bench/relay.sh - starting and stopping one relay for a benchmark script
# (sourced by bench/run and bench/soak; not run on its own).
#
# relay_start NAME starts stored and $WORKERS relayd from $BUILD on a free
# 127.0.0.1 port in a new temp dir, with BENCH_RELAY_CONF's extra lines
# (';'-separated), and waits until every worker listens; it sets RELAY_DIR,
# RELAY_URL and RELAY_PIDS (stored's first, comma-separated).  relay_stop
# stops what relay_start started (workers first, each waited for) and
# removes the dir unless BENCH_KEEP is set.  relay_kill_restart I kills
# process I (0: stored, 1..WORKERS: a worker) with SIGKILL and starts it
# again, as systemd's Restart= would.  The caller defines log() and sets
# BUILD and WORKERS.

RELAY_DIR='' RELAY_URL='' RELAY_PIDS='' STARTED=()

free_port() { # below the ephemeral range, so no client socket can hold it
	local p lo
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
	for _ in $(seq 1 200); do
		p=$((10000 + RANDOM % (lo - 10000)))
		if ! ss -Htan "( sport = :$p )" | grep -q .; then
			echo "$p"
			return
		fi
	done
	log "no free port"
	exit 1
}

# Starts process I (0: stored, waited for until its socket is there; else
# worker I) and records its pid in STARTED[I] and RELAY_PIDS.
relay_spawn() { # relay_spawn I
	local conf=$RELAY_DIR/relay.conf tries=0 IFS=,
	if [ "$1" = 0 ]; then
		rm -f "$RELAY_DIR/run/stored-rpc.ipc" # a killed stored's, if any
		"$BUILD/stored" -c "$conf" >>"$RELAY_DIR/stored.log" 2>&1 &
		STARTED[0]=$!
		until [ -S "$RELAY_DIR/run/stored-rpc.ipc" ]; do
			tries=$((tries + 1))
			[ $tries -lt 200 ] || { log "stored did not start"; cat "$RELAY_DIR/stored.log" >&2; exit 1; }
			sleep 0.05
		done
	else
		"$BUILD/relayd" -c "$conf" -i "$1" >>"$RELAY_DIR/relayd$1.log" 2>&1 &
		STARTED[$1]=$!
	fi
	RELAY_PIDS="${STARTED[*]}"
}

relay_kill_restart() { # relay_kill_restart I
	local pid=${STARTED[$1]}
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	relay_spawn "$1"
}

relay_start() { # relay_start NAME
	local port conf i tries
	RELAY_DIR=$(mktemp -d "${TMPDIR:-/tmp}/crelay-bench-$1.XXXXXX")
	port=$(free_port)
	conf=$RELAY_DIR/relay.conf
	{
		echo "# written by $(basename "$0")"
		echo "bind = 127.0.0.1"
		echo "port = $port"
		echo "workers = $WORKERS"
		echo "data_dir = $RELAY_DIR/data"
		echo "run_dir = $RELAY_DIR/run"
		echo "log_level = warn"
		echo "private_kinds =" # no scenario measures private kinds (RESULTS.md)
		if [ -n "${BENCH_RELAY_CONF:-}" ]; then tr ';' '\n' <<<"$BENCH_RELAY_CONF"; fi
	} >"$conf"
	STARTED=()
	relay_spawn 0
	for i in $(seq 1 "$WORKERS"); do
		relay_spawn "$i"
	done
	tries=0
	until [ "$(ss -Htln "sport = :$port" | wc -l)" -ge "$WORKERS" ]; do
		tries=$((tries + 1))
		[ $tries -lt 200 ] || { log "relayd did not listen"; cat "$RELAY_DIR"/*.log >&2; exit 1; }
		sleep 0.05
	done
	sleep 0.3 # each worker dials stored after it listens
	RELAY_URL=ws://127.0.0.1:$port
	log "relay $1 on $RELAY_URL (pids $RELAY_PIDS)"
}

relay_stop() {
	local pid i
	[ ${#STARTED[@]} -gt 0 ] || return 0
	# Workers first, then stored, each waited for.
	for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do
		pid=${STARTED[$i]}
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || log "pid $pid exited with status $?"
	done
	STARTED=()
	if [ -n "${BENCH_KEEP:-}" ]; then log "kept $RELAY_DIR"; else rm -rf "$RELAY_DIR"; fi
}
