#!/bin/bash
# Task management under load (tests/integration/tmfload.c): LOGICAL UNIT
# RESET, ABORT TASK SET and TARGET WARM RESET, in turn, while 4 sessions
# keep 64 reads in flight, $TCQ_TMF_ROUNDS times (1000 by default): every
# function answers 0, nothing is answered twice, every command is answered
# GOOD or aborted silently (TAS is 0: never TASK ABORTED), ABORT TASK SET
# aborts its own nexus' commands and no other's, the resets every
# nexus', and afterwards tcqd holds no task (in flight now 0) and as many
# I/O buffers as before the load.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TMFLOAD=${TMFLOAD:-$top_builddir/tests/integration/tmfload}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$TMFLOAD" "$TCQCTL"
need_tool jq
SOCK=$TEST_TMP/ctl.sock
ROUNDS=${TCQ_TMF_ROUNDS:-1000}
IQN=iqn.2026-11.org.tcq:tmfload

fixture_load() {
	printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK" \
		>"$TEST_TMP/tcqd.conf"
	# reads wait 5 ms in the backend: still in flight when the reset comes
	printf '[target %s]\n[lun %s 0]\nbackend = delay:latency=5ms,base=null\nsize = 64M\n' \
		"$IQN" "$IQN" >>"$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
}

# stat_of FILTER: a number from tcqctl stats --json.
stat_of() {
	tc "$TCQCTL" -s "$SOCK" --json stats | jq -e "$1"
}

resets_under_load_answer_every_command_once() {
	local before after inflight
	before=$(stat_of .buffers_in_use) || fail "no buffers_in_use in tcqctl stats"
	run "$TMFLOAD" --rounds "$ROUNDS" "$TCQD_HOST" "$TCQD_PORT" "$IQN" \
		resets_under_load || fail "$(grep -m3 FAIL <<<"$OUT")"
	grep -q ": case resets_under_load: passed$" <<<"$OUT" || fail "no 'passed' line"
	ok "$ROUNDS rounds: $(grep -o '[0-9]* commands: .*' <<<"$OUT" | head -1)"
	inflight=$(stat_of '[.luns[].inflight.current] | add') || fail "no in-flight count"
	[ "$inflight" = 0 ] || fail "$inflight tasks still in flight after the load"
	ok "no task left in flight"
	wait_until 50 buffers_back "$before" ||
		fail "I/O buffers in use: $before before the load, $after after"
	ok "I/O buffers in use back to $before"
}
buffers_back() {
	after=$(stat_of .buffers_in_use) && [ "$after" = "$1" ]
}

# After the load: stats' memory reports the resident set (as /proc says,
# within 10%), what malloc holds, and the pool's cache of the freed I/O
# buffers (the load's reads used some, so it is not empty). The heap
# figure is glibc's (mallinfo2), and the pool's buffers come from malloc
# (posix_memalign): heap in use holds them, so it is at least the pool's
# cache. Under AddressSanitizer, whose allocator replaces glibc's (libasan
# is mapped in tcqd), mallinfo2 reads 0, so only its presence is checked.
stats_memory_reports_rss_heap_and_pool() {
	local rss proc heap pool
	rss=$(stat_of .memory.rss_bytes) || fail "no memory.rss_bytes in tcqctl stats"
	proc=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$TCQD_PID/status")
	if [ "$rss" -lt $((proc * 9 / 10)) ] || [ "$rss" -gt $((proc * 11 / 10)) ]; then
		fail "memory.rss_bytes $rss, /proc says $proc"
	fi
	heap=$(stat_of .memory.heap_in_use_bytes) || fail "no memory.heap_in_use_bytes"
	pool=$(stat_of .memory.pool_cached_bytes) || fail "no memory.pool_cached_bytes"
	[ "$pool" -gt 0 ] || fail "pool cached $pool after a load of reads"
	if ! grep -q libasan "/proc/$TCQD_PID/maps"; then
		[ "$heap" -ge "$pool" ] ||
			fail "heap in use $heap is less than the pool's cache $pool (malloc'd)"
	fi
	ok "memory: rss $rss (/proc $proc), heap in use $heap, pool cached $pool"
}

CHECKS=(
	@load
	resets_under_load_answer_every_command_once
	stats_memory_reports_rss_heap_and_pool
)
run_checks "$@"
