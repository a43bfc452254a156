#!/bin/bash
# Sessions on two reactors. queue_depth bounds the LUN's I/Os in flight
# over both reactors (backend/bdev_depth.c): with two sessions placed on
# reactors 0 and 1, each keeping 16 reads in flight on a LUN of depth 4
# whose I/Os take 10 ms (the delay backend), tcqctl stats never shows more
# than 4 in flight now, nor a peak above 4, nor now above peak, also when
# the depth is lowered and raised live; ORDERED tasks keep their order
# meanwhile. Sessions spread evenly over the reactors (target/portal.c),
# also when a short-lived connection comes before each login; and
# --threads beyond the CPUs is warned about, naming both numbers.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$TCQCTL" "$BENCH"

SOCK=$TEST_TMP/ctl.sock
DEPTH=4
ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }
# jqv FILTER: FILTER holds on the last JSON answer ($OUT).
jqv() { printf '%s\n' "$OUT" | jq -e "$1" >/dev/null; }
# q FILTER: its value on $OUT.
q() { printf '%s\n' "$OUT" | jq -r "$1"; }

# load SECONDS SESSIONS DEPTH [OPTION...]: tcq-bench random reads in the
# background (BG_PIDS), one worker thread per session, for SECONDS at
# most (stop_load ends it sooner).
load() {
	local secs=$1 n=$2 d=$3
	shift 3
	"$BENCH" --quiet --rw randread --bs 4k --depth "$d" --sessions "$n" \
		--threads "$n" --runtime "$secs" "$@" "$TCQD_URL" \
		>"$TEST_TMP/load.$n.out" 2>&1 &
	BG_PIDS+=($!)
}
# sessions_on R...: 'tcqctl sessions' lists sessions on exactly the
# reactors R... (sorted, one entry per session).
sessions_on() {
	local want
	want=$(printf '%s\n' "$@" | jq -sc .)
	OUT=$(tc "$TCQCTL" -s "$SOCK" sessions --json) &&
		[ "$(q '[.sessions[].reactor] | sort | tostring')" = "$want" ]
}
# end_load: waits for the last load to end. stop_load: ends it now
# (SIGINT: tcq-bench stops its point and reports it, status 0 unless an
# I/O failed), so a load can outlive the steps of its check however slow
# the machine is.
end_load() {
	local pid=${BG_PIDS[-1]}
	wait "$pid" || { cat "$TEST_TMP"/load.*.out; fail "the load failed"; }
	unset 'BG_PIDS[-1]'
}
stop_load() {
	kill -INT "${BG_PIDS[-1]}" 2>/dev/null
	end_load
}
# sample_inflight MAX N: N samples of stats 0.1 s apart; each must show
# now <= MAX, peak <= MAX and now <= peak. SAMPLED_MAX: the highest now.
sample_inflight() {
	local max=$1 n=$2 i now peak
	SAMPLED_MAX=0
	for ((i = 0; i < n; i++)); do
		OUT=$(tc "$TCQCTL" -s "$SOCK" stats --json) || fail "stats failed"
		now=$(q '.luns[0].inflight.current')
		peak=$(q '.luns[0].inflight.peak')
		say "in flight now $now, peak $peak (queue_depth $max)"
		[ "$now" -le "$max" ] ||
			fail "$now I/Os in flight on a LUN of queue_depth $max"
		[ "$peak" -le "$max" ] ||
			fail "peak $peak above queue_depth $max"
		[ "$now" -le "$peak" ] || fail "now $now above peak $peak"
		[ "$now" -gt "$SAMPLED_MAX" ] && SAMPLED_MAX=$now
		sleep 0.1
	done
}
inflight_is() {
	OUT=$(tc "$TCQCTL" -s "$SOCK" stats --json) &&
		[ "$(q '.luns[0].inflight.current')" "$1" "$2" ]
}

# ---- queue_depth over both reactors -----------------------------------------
fixture_depth() {
	need_tool jq
	start_tcqd --ctl "$SOCK" --threads 2 --queue-depth "$DEPTH" \
		--backend "delay:latency=10ms,base=ram:size=64M"
}

queue_depth_bounds_in_flight_over_both_reactors() {
	ctl reset || fail "reset failed"
	load 120 2 16
	wait_until 50 sessions_on 0 1 ||
		fail "the two sessions are not on reactors 0 and 1: $OUT"
	ok "two sessions, on reactors 0 and 1, 16 reads in flight each"
	sample_inflight "$DEPTH" 10
	[ "$SAMPLED_MAX" -eq "$DEPTH" ] ||
		fail "never $DEPTH in flight under 32 outstanding reads"
	ok "in flight never above queue_depth $DEPTH over both reactors, and at it"
	stop_load
	ctl stats --json || fail "stats failed"
	jqv ".luns[0].inflight.peak == $DEPTH and .luns[0].inflight.current == 0" ||
		fail "after the load: peak $(q .luns[0].inflight.peak), now $(q .luns[0].inflight.current)"
	jqv "[.luns[0].inflight.occupancy_at_submit[].lo] | max <= $DEPTH" ||
		fail "an I/O was submitted with more than $DEPTH in flight"
	ok "peak $DEPTH, the LUN-wide occupancy at submit never above it"
}

queue_depth_lowered_and_raised_live_over_both_reactors() {
	load 120 2 16
	wait_until 50 sessions_on 0 1 || fail "sessions not on reactors 0 and 1"
	ctl set 0 queue_depth=2 || fail "set queue_depth=2 failed"
	wait_until 20 inflight_is -le 2 || fail "in flight stays above 2"
	ctl reset || fail "reset failed"	# the peak starts from now
	sample_inflight 2 5
	ok "lowered live to 2: in flight drains to it and stays"
	ctl set 0 queue_depth=8 || fail "set queue_depth=8 failed"
	wait_until 30 inflight_is -eq 8 || fail "raised to 8, in flight never reached it"
	sample_inflight 8 5
	ok "raised live to 8: waiters of both reactors take the new slots"
	ctl set 0 queue_depth="$DEPTH" || fail "set back failed"
	stop_load
}

ordered_tasks_keep_order_with_the_depth_shared() {
	ctl reset || fail "reset failed"
	load 120 1 16
	wait_until 50 session_count_is 1 || fail "the load's session is not listed"
	# order-check's session: on the other reactor, sharing the depth.
	run "$BENCH" order-check --count 200 --depth 16 "$TCQD_URL" ||
		fail "order-check exit status $?"
	grep -q '^order-check: 0 violations' <<<"$OUT" ||
		fail "order-check did not report 0 violations"
	ok "order-check: 0 violations next to a load on the other reactor"
	ctl stats --json || fail "stats failed"
	jqv ".luns[0].inflight.peak <= $DEPTH" || fail "peak above $DEPTH"
	jqv '.luns[0].ordered_drain_us.count > 0' || fail "no ORDERED task drained"
	ok "ORDERED tasks drained, peak within queue_depth"
	stop_load
}

# ---- racing completions ------------------------------------------------------
# I/Os of 20 us on a LUN of depth 1, four sessions on two reactors: nearly
# every completion frees the one slot while the other reactor waits for
# it, so a wake-up lost between them would leave I/O waiting for ever
# (tcq-bench would never finish its point). Before: "> 1000 I/Os in 3 s",
# a throughput floor. Now the load is a count, 50000 reads (>= 1 s of
# 20 us delays through the one slot, so the sessions are seen on their
# reactors first; 300 s only guards a hang), and the LUN must have
# completed every one of them: a count, whatever the host's speed.
fixture_race() {
	need_tool jq
	start_tcqd --ctl "$SOCK" --threads 2 --queue-depth 1 \
		--backend "delay:latency=20us,base=null:size=64M"
}

no_io_left_waiting_after_racing_completions() {
	load 300 4 8 --ios 50000
	wait_until 50 sessions_on 0 0 1 1 || fail "4 sessions not on reactors 0, 0, 1, 1"
	sample_inflight 1 5
	end_load
	ok "every I/O of 4 sessions at depth 8 over one slot completed"
	ctl stats --json || fail "stats failed"
	jqv '.luns[0].inflight.current == 0 and .luns[0].inflight.peak == 1' ||
		fail "after the load: now $(q .luns[0].inflight.current), peak $(q .luns[0].inflight.peak)"
	jqv '.luns[0].inflight.ios >= 50000' ||
		fail "$(q .luns[0].inflight.ios) of 50000 I/Os completed"
	ok "nothing left in flight, peak 1, all $(q .luns[0].inflight.ios) of 50000 I/Os completed"
}

# ---- placement --------------------------------------------------------------
fixture_placement() {
	need_tool jq
	start_tcqd --ctl "$SOCK" --threads 2 \
		--backend "delay:latency=50ms,base=null:size=64M"
}

count_on() {	# count_on R: sessions listed on reactor R ($OUT)
	q "[.sessions[] | select(.reactor == $1)] | length"
}
no_sessions() {
	OUT=$(tc "$TCQCTL" -s "$SOCK" sessions --json) && [ "$(q .count)" -eq 0 ]
}
session_count_is() {
	OUT=$(tc "$TCQCTL" -s "$SOCK" sessions --json) && [ "$(q .count)" -eq "$1" ]
}
closed_count_at_least() {
	[ "$(log_since_mark | grep -c ': connection closed: ')" -ge "$1" ]
}

eight_sessions_spread_four_and_four() {
	load 3 8 1
	wait_until 50 session_count_is 8 || fail "8 sessions not listed: $OUT"
	[ "$(count_on 0)" -eq 4 ] && [ "$(count_on 1)" -eq 4 ] ||
		fail "8 sessions: $(count_on 0) on reactor 0, $(count_on 1) on reactor 1"
	ok "8 sessions: 4 on reactor 0, 4 on reactor 1"
	end_load
	wait_until 50 no_sessions || fail "sessions left after the load"
}

# Each login comes after a connection that closes at once (as a discovery
# session or a probe would): placed round-robin over connections, every
# session would land on one reactor.
sessions_spread_evenly_with_short_connections_between() {
	local i fd
	for ((i = 1; i <= 8; i++)); do
		exec {fd}<>"/dev/tcp/$TCQD_HOST/$TCQD_PORT" ||
			fail "cannot connect to $TCQD_PORTAL"
		exec {fd}>&-
		wait_until 50 closed_count_at_least "$i" ||
			fail "tcqd did not log the close of short connection $i"
		"$BENCH" --quiet --rw read --bs 4k --depth 1 --runtime 30 \
			"$TCQD_URL" >"$TEST_TMP/one.$i.out" 2>&1 &
		BG_PIDS+=($!)
		wait_until 50 session_count_is "$i" || fail "session $i not listed"
	done
	say "sessions per reactor: 0: $(count_on 0), 1: $(count_on 1)"
	[ "$(count_on 0)" -eq 4 ] && [ "$(count_on 1)" -eq 4 ] ||
		fail "8 sessions after short connections: $(count_on 0) on reactor 0, $(count_on 1) on reactor 1"
	ok "8 sessions after 8 short connections: 4 on each reactor"
	for i in "${BG_PIDS[@]}"; do kill -TERM "$i"; done
	for i in "${BG_PIDS[@]}"; do wait "$i" 2>/dev/null; done
	BG_PIDS=()
	wait_until 50 no_sessions || fail "sessions left after the loads"
}

# ---- threads and CPUs -------------------------------------------------------
# The warning comes before "tcqd ready"; the log is this tcqd's own
# file (start_tcqd), read whole.
ready_logged() { grep -q 'tcqd ready' "$TCQD_LOG"; }

threads_beyond_cpus_warned() {
	local cpus want
	cpus=$(nproc)
	[ "$cpus" -lt 64 ] || skip "$cpus CPUs: --threads cannot exceed them"
	start_tcqd --threads $((cpus + 1))
	wait_until 50 ready_logged || fail "no 'tcqd ready' logged"
	want="threads $((cpus + 1)) is more than the $cpus CPU"
	grep -F "$want" "$TCQD_LOG" | grep -q WARN ||
		fail "no warning '$want' in the log"
	ok "--threads $((cpus + 1)) on $cpus CPUs is warned about, naming both"
	tcqd_alive
	ok "and tcqd runs"
	stop_tcqd
}

threads_at_cpus_not_warned() {
	start_tcqd --threads "$(nproc)"
	wait_until 50 ready_logged || fail "no 'tcqd ready' logged"
	! grep -q 'is more than the' "$TCQD_LOG" ||
		fail "a warning for --threads $(nproc) on $(nproc) CPUs"
	ok "--threads $(nproc) on $(nproc) CPUs: no warning"
	stop_tcqd
}

CHECKS=(
	@depth
	queue_depth_bounds_in_flight_over_both_reactors
	queue_depth_lowered_and_raised_live_over_both_reactors
	ordered_tasks_keep_order_with_the_depth_shared
	@race
	no_io_left_waiting_after_racing_completions
	@placement
	eight_sessions_spread_four_and_four
	sessions_spread_evenly_with_short_connections_between
	@
	threads_beyond_cpus_warned
	threads_at_cpus_not_warned
)
run_checks "$@"
