# shellcheck shell=bash
# bench/quiet.sh - waiting for a quiet machine before a measurement
# (sourced by bench/run and bench/peer; not run on its own).
#
# wait_quiet waits up to BENCH_QUIET seconds (300 by default; 0 returns at
# once) until less than 10% of one core is busy and the host of a virtual
# machine takes less than BENCH_MAX_STEAL % (10) of our CPUs.  It returns 0
# either way and logs why it waited.  The caller defines log().

host_steal_pct() { # spins every CPU for 2 s; prints the share the host took from us (steal), in %
	local a b n
	n=$(nproc)
	a=$(awk '/^cpu /{print $9 + 0}' /proc/stat)
	for _ in $(seq 1 "$n"); do timeout 2 bash -c 'while :; do :; done' & done
	wait
	b=$(awk '/^cpu /{print $9 + 0}' /proc/stat)
	echo $(((b - a) * 100 / ($(getconf CLK_TCK) * 2 * n)))
}

# Waits (bounded) until the machine is nearly idle and, on a virtual machine,
# its host gives it its CPUs (steal under BENCH_MAX_STEAL %, 10 by default):
# a busy host doubled some latencies between two runs of the same binaries
# (bench/RESULTS.md item 39).  Each RESULT line reports steal_pct anyway.
wait_quiet() {
	local max=${BENCH_QUIET:-300} max_steal=${BENCH_MAX_STEAL:-10} end busy steal a1 a2 a3 a6 a7 b1 b2 b3 b6 b7
	[ "$max" != 0 ] || return 0
	end=$((SECONDS + max))
	while [ $SECONDS -lt "$end" ]; do
		read -r _ a1 a2 a3 _ _ a6 a7 _ </proc/stat
		sleep 5
		read -r _ b1 b2 b3 _ _ b6 b7 _ </proc/stat
		busy=$(((b1 + b2 + b3 + b6 + b7) - (a1 + a2 + a3 + a6 + a7)))
		# clock ticks in 5 s; 10% of one core is 5 s * CLK_TCK / 10
		if [ "$busy" -ge $(($(getconf CLK_TCK) / 2)) ]; then
			log "machine busy ($busy ticks in 5 s), waiting"
			continue
		fi
		steal=$(host_steal_pct)
		[ "$steal" -lt "$max_steal" ] && return 0
		log "the host takes $steal% of our CPUs (steal), waiting"
	done
	log "machine still busy after ${max}s; running anyway (see other_cpu_pct and steal_pct)"
}
