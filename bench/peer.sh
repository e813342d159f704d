# shellcheck shell=bash
# bench/peer.sh - starting and stopping strfry, the peer relay that
# bench/peer measures beside this one (sourced after bench/relay.sh, whose
# free_port it uses; not run on its own).
#
# peer_find sets PEER_BIN to a strfry that runs, looked for in
# BENCH_PEER_DIR if set, else in ../shared/peers/strfry beside the
# repository and then /work/shared/peers/strfry; it returns 1, with
# PEER_MISSING saying why, when there is none.  Nothing of strfry is part of this repository.
#
# peer_start NAME copies the peer's strfry.conf into a new temp dir and
# starts `strfry relay` on a free 127.0.0.1 port with its database there,
# and waits until it listens; it sets PEER_DIR, PEER_URL and PEER_PID.
# peer_stop stops it (SIGTERM, waited for) and removes the dir unless
# BENCH_KEEP is set.  The caller defines log() and sets ROOT.
#
# The config is strfry's own except for these overrides: the port and the
# database; nofiles = 0, so strfry keeps the descriptor limit the script
# set for both relays; and rejectEventsOlderThanSeconds, because the event
# files are dated from 2023 and strfry refuses events over 3 years old.

PEER_BIN='' PEER_MISSING='' PEER_DIR='' PEER_URL='' PEER_PID=''

peer_find() {
	local d dirs=("$ROOT/../shared/peers/strfry" /work/shared/peers/strfry)
	[ -z "${BENCH_PEER_DIR:-}" ] || dirs=("$BENCH_PEER_DIR")
	for d in "${dirs[@]}"; do
		if [ ! -x "$d/strfry" ] || [ ! -r "$d/strfry.conf" ]; then continue; fi
		if ! "$d/strfry" --version >/dev/null 2>&1; then
			PEER_MISSING="$d/strfry does not run (its README lists the runtime packages)"
			continue
		fi
		PEER_BIN=$d/strfry
		return 0
	done
	[ -n "$PEER_MISSING" ] || PEER_MISSING="no strfry and strfry.conf in ${dirs[*]}"
	return 1
}

peer_start() { # peer_start NAME
	local port tries=0
	PEER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/strfry-bench-$1.XXXXXX")
	port=$(free_port)
	cp "$(dirname "$PEER_BIN")/strfry.conf" "$PEER_DIR/strfry.conf"
	mkdir -p "$PEER_DIR/db"
	(cd "$PEER_DIR" && exec "$PEER_BIN" --config=strfry.conf --set relay.port="$port" --set db=./db/ \
		--set relay.nofiles=0 --set events.rejectEventsOlderThanSeconds=2000000000 relay \
		>"$PEER_DIR/strfry.log" 2>&1) &
	PEER_PID=$!
	until [ "$(ss -Htln "sport = :$port" | wc -l)" -ge 1 ]; do
		tries=$((tries + 1))
		if ! kill -0 "$PEER_PID" 2>/dev/null || [ $tries -ge 200 ]; then
			log "strfry did not listen"
			cat "$PEER_DIR/strfry.log" >&2
			exit 1
		fi
		sleep 0.05
	done
	PEER_URL=ws://127.0.0.1:$port
	log "strfry $1 on $PEER_URL (pid $PEER_PID)"
}

peer_stop() {
	[ -n "$PEER_PID" ] || return 0
	kill -TERM "$PEER_PID" 2>/dev/null || true
	wait "$PEER_PID" 2>/dev/null || true
	PEER_PID=''
	if [ -n "${BENCH_KEEP:-}" ]; then log "kept $PEER_DIR"; else rm -rf "$PEER_DIR"; fi
}
