#!/bin/bash
# tcqctl against a live tcqd: statistics under a tcq-bench load, live
# settings (queue_depth caps the next load's peak in flight; barrier
# policies show in flush and drain counts), the session listing, and clear
# errors with a non-zero exit for bad requests.
. "$(dirname "$0")/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
[ -x "$TCQCTL" ] || fail "tcqctl not built at $TCQCTL"
[ -x "$BENCH" ] || fail "tcq-bench not built at $BENCH"
need_tool jq

SOCK=$TEST_TMP/ctl.sock
ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }
# jqv FILTER: evaluates FILTER on the last JSON answer ($OUT).
jqv() { printf '%s\n' "$OUT" | jq -e "$1" >/dev/null; }
bench() { run "$BENCH" --quiet --runtime 1 "$@" "$TCQD_URL"; }

start_tcqd --ctl "$SOCK" --threads 2
[ -S "$SOCK" ] || fail "no control socket at $SOCK"
[ "$(stat -c %a "$SOCK")" = 600 ] || fail "control socket mode is not 0600"
ok "control socket $SOCK, mode 0600"

# ---- statistics under load ----
bench --engine libiscsi --rw randread --bs 4k --depth 8 ||
	fail "tcq-bench libiscsi load failed"
ctl stats --json || fail "tcqctl stats --json failed"
jqv '.ok == true and (.luns | length) == 1' || fail "stats: bad document"
jqv '.luns[0].commands.total > 0 and .luns[0].commands.simple > 0' ||
	fail "stats: no commands counted"
jqv '.luns[0].latency_us.count > 0 and .luns[0].latency_us.p50 > 0 and
     .luns[0].latency_us.p99 >= .luns[0].latency_us.p50 and
     .luns[0].latency_us.p99_9 >= .luns[0].latency_us.p99' ||
	fail "stats: latency percentiles missing or out of order"
jqv '.luns[0].inflight.peak >= 1 and .luns[0].inflight.current == 0 and
     (.luns[0].inflight.occupancy_at_submit | length) > 0' ||
	fail "stats: in-flight figures missing"
ok "stats count the load"
ctl stats || fail "tcqctl stats (text) failed"
[[ $OUT == *"latency"*"p99.9"* ]] || fail "text stats lack the latency line"

# ---- queue_depth applies live; sessions listed during the load ----
ctl set 0 queue_depth=4 || fail "set queue_depth failed"
ctl luns --json || fail "luns failed"
jqv '.luns[0].queue_depth == 4' || fail "queue_depth not changed"
ctl reset || fail "reset failed"
ctl stats --json || fail "stats after reset failed"
jqv '.luns[0].commands.total == 0 and .luns[0].inflight.peak == 0' ||
	fail "reset left counts behind"

say "\$ tcq-bench --rw randread --depth 32 --runtime 2 (background)"
"$BENCH" --quiet --rw randread --bs 4k --depth 32 --runtime 2 "$TCQD_URL" \
	>"$TEST_TMP/bench.out" 2>&1 &
BENCH_PID=$!
found=0
for ((i = 0; i < 30; i++)); do
	sleep 0.1
	OUT=$(tc "$TCQCTL" -s "$SOCK" sessions --json) || fail "sessions failed"
	if jqv '.count >= 1'; then
		found=1
		break
	fi
done
printf '%s\n' "$OUT" | sed 's/^/    /'
[ "$found" = 1 ] || fail "no session listed while tcq-bench ran"
printf '%s\n' "$OUT" | jq -e --arg iqn "$TCQD_IQN" \
	'.sessions[0] | .target == $iqn and .type == "normal" and
	 (.initiator | length) > 0 and (.isid | length) == 12 and .tsih > 0 and
	 (.peer | startswith("127.0.0.1:")) and
	 .params.MaxRecvDataSegmentLength > 0' >/dev/null ||
	fail "session listing lacks fields"
ctl sessions || fail "tcqctl sessions (text) failed"
[[ $OUT == *"TSIH"*"$TCQD_IQN"* ]] || fail "text sessions lack the session"
wait "$BENCH_PID" || { cat "$TEST_TMP/bench.out"; fail "depth-32 load failed"; }
ok "a live session is listed"
ctl stats --json || fail "stats failed"
jqv '.luns[0].commands.total > 0' || fail "no commands in the depth-32 load"
jqv '.luns[0].inflight.peak >= 1 and .luns[0].inflight.peak <= 4' ||
	fail "peak in flight exceeds the live queue_depth of 4"
ok "live queue_depth=4 caps the peak in flight: $(printf '%s' "$OUT" | jq .luns[0].inflight.peak)"
tcqd_alive

# ---- barrier policy applies live ----
ctl set 0 queue_depth=32 barrier=flush || fail "set barrier=flush failed"
ctl reset || fail "reset failed"
bench --rw randwrite --bs 4k --depth 8 --ordered 50 ||
	fail "ORDERED write load failed"
ctl stats --json || fail "stats failed"
jqv '.luns[0].commands.ordered > 0 and .luns[0].ordered_drain_us.count > 0' ||
	fail "ORDERED tasks not counted"
jqv '.luns[0].flushes.barrier > 0' || fail "barrier=flush issued no flushes"
ok "barrier=flush: $(printf '%s' "$OUT" | jq .luns[0].flushes.barrier) barrier flushes"
ctl --json set 0 barrier=ignore write_cache=off || fail "set barrier=ignore failed"
jqv '.lun.barrier == "ignore" and .lun.write_cache == false' ||
	fail "set did not report the new settings"
ctl reset || fail "reset failed"
bench --rw randwrite --bs 4k --depth 8 --ordered 50 ||
	fail "ORDERED write load failed"
ctl stats --json || fail "stats failed"
jqv '.luns[0].commands.ordered > 0 and .luns[0].ordered_drain_us.count == 0 and
     .luns[0].flushes.barrier == 0 and .luns[0].barrier == "ignore" and
     .luns[0].write_cache == false' ||
	fail "barrier=ignore still drains or flushes"
ok "barrier=ignore: ORDERED runs as SIMPLE"
ctl set 0 barrier=drain write_cache=on || fail "set back failed"

# ---- bad requests ----
expect_error() {	# expect_error WORDS-IN-MESSAGE ARGS...
	local want=$1 rc=0
	shift
	run "$TCQCTL" -s "$SOCK" "$@" || rc=$?
	[ "$rc" -ne 0 ] || fail "tcqctl $* succeeded"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: message lacks '$want'"
}
expect_error "queue_depth" set 0 queue_depth=0
expect_error "queue_depth" set 0 queue_depth=2000
expect_error "barrier" set 0 barrier=sometimes
expect_error "write_cache" set 0 write_cache=maybe
expect_error "unknown setting" set 0 colour=blue
expect_error "no LUN 7" set 7 queue_depth=1
expect_error "no target" set iqn.2026-11.org.tcq:nope/0 barrier=drain
expect_error "unknown command" frobnicate
expect_error "crash" crash 0
expect_error "cannot connect" -s "$TEST_TMP/nope.sock" stats
rc=0
run "$TCQCTL" -s "$SOCK" || rc=$?
[ "$rc" -eq 2 ] || fail "tcqctl without a command: status $rc, expected 2"
ctl luns --json || fail "luns failed"
jqv '.luns[0].queue_depth == 32 and .luns[0].barrier == "drain"' ||
	fail "a refused request changed settings"
ok "bad requests are refused with a message"

tcqd_alive
stop_tcqd
[ -e "$SOCK" ] && fail "control socket left behind after exit"

# ---- crash on a cache backend (durability.sh checks what survives) ----
make_lun "$TEST_TMP/cache.img" 16M
start_tcqd --ctl "$SOCK" --export "$TEST_TMP/cache.img" --size 16M \
	--backend cache:writeback=0,base=aio
bench --engine libiscsi --rw randwrite --bs 4k --depth 4 ||
	fail "write load on the cache backend failed"
ctl --json crash 0 || fail "tcqctl crash failed"
jqv '.ok == true and .dropped_blocks >= 0' || fail "crash: bad answer"
ok "crash dropped $(printf '%s' "$OUT" | jq .dropped_blocks) unsaved blocks"
bench --engine libiscsi --rw randread --bs 4k --depth 4 ||
	fail "the LUN does not serve reads after a crash"
tcqd_alive
stop_tcqd
pass
