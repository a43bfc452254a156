#!/bin/bash
# tcqctl against a live tcqd: statistics under a tcq-bench load, live
# settings (queue_depth caps the next load's peak in flight; barrier
# policies show in flush and drain counts), the session listing, clear
# errors with a non-zero exit for bad requests, and every command's plain
# text output (what a user reads, checked without jq).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
need_built "$TCQCTL" "$BENCH" "$RAWCDB" "$SCSICMD"

SOCK=$TEST_TMP/ctl.sock
IQN=iqn.2026-11.org.tcq:export
TUR=000000000000
READ8=28000000000000000800:4096	# READ(10) of 8 blocks at LBA 0
ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }
# jqv FILTER: evaluates FILTER on the last JSON answer ($OUT).
jqv() { printf '%s\n' "$OUT" | jq -e "$1" >/dev/null; }
bench() { run "$BENCH" --quiet --runtime 1 "$@" "$TCQD_URL"; }
# line TEXT: $OUT holds the line TEXT, exactly.
line() {
	grep -qxF -- "$1" <<<"$OUT" || fail "no line '$1'"
	ok "tcqctl prints '$1'"
}

# hold_session: a 2 s tcq-bench load (in BG_PIDS) that shows up in
# 'sessions' within 3 s; its output in $OUT.
hold_session() {
	"$BENCH" --quiet --rw randread --bs 4k --depth 32 --runtime 2 \
		--initiator-name "$INITIATOR" \
		"$TCQD_URL" >"$TEST_TMP/bench.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 30 has_session || fail "no session listed while tcq-bench ran"
}
has_session() {
	OUT=$(tc "$TCQCTL" -s "$SOCK" sessions) && [[ $OUT == TSIH* ]]
}
end_hold() {
	wait "${BG_PIDS[-1]}" || { cat "$TEST_TMP/bench.out"; fail "the load failed"; }
	unset 'BG_PIDS[-1]'
}

fixture_ctl() {
	start_tcqd --ctl "$SOCK" --threads 2
}

control_socket_mode_0600() {
	[ -S "$SOCK" ] || fail "no control socket at $SOCK"
	[ "$(stat -c %a "$SOCK")" = 600 ] || fail "control socket mode is not 0600"
	ok "control socket $SOCK, mode 0600"
}

# ---- JSON answers under load ------------------------------------------------
stats_json_counts_the_load() {
	need_tool jq
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
}

# One command in 16 is timed along its path (tcqctl stats' path_mean_us):
# behind a backend that holds every I/O 5 ms, the backend stage carries
# at least the 5 ms and is the largest stage of the path. Before: backend
# in 4900..6000 us and every other stage under 1000 us, which a loaded
# host broke (6.6 ms measured). Now: half the configured delay is a
# lower bound (the delay runs from the start of the reactor pass, the
# stage from the submit inside it: see the check), and the
# attribution compares the stages of the same run with each other, so
# the host's speed moves every figure but not the check's answer. The
# figures themselves are scripts/path-breakdown's.
path_breakdown_finds_the_slow_stage() {
	need_tool jq
	ctl lun add "$IQN/1" backend=delay:latency=5ms,base=null size=64M ||
		fail "lun add of a delay LUN failed: $OUT"
	run "$BENCH" --quiet --runtime 1 --rw randread --bs 4k --depth 1 \
		"${TCQD_URL%/*}/1" || fail "load on the delay LUN failed"
	ctl stats --json || fail "stats failed"
	local p='.luns[] | select(.lun == 1) | .path_mean_us' b
	jqv "$p | .samples >= 5 and .io_samples == .samples" ||
		fail "path: too few sampled commands: $(jq -c "$p" <<<"$OUT")"
	# Half the delay, not all of it: the delay backend counts its 5 ms
	# from the start of the reactor pass that submitted the command
	# (backend/delay.c, delay_arrival_ns), the backend stage from the
	# submit inside that pass, so a long pass (ASan, load) shortens the
	# stage (4770 us seen in a sanitizer CI run). A 1 ms delay still fails.
	jqv "$p | .backend >= 2500" ||
		fail "path: backend stage under half the 5 ms delay: $(jq -c "$p" <<<"$OUT")"
	jqv "$p | .backend as \$b | [.transport_in, .to_submit, .to_status, .transport_out] |
	     all(. >= 0 and . < \$b)" ||
		fail "path: a stage other than the delayed backend took the time: $(jq -c "$p" <<<"$OUT")"
	ok "path breakdown: $(jq -c "$p" <<<"$OUT")"
	ctl stats || fail "text stats failed"
	# the path line in LUN 1's block: its backend figure, whole us
	b=$(awk -v l="$IQN/1" '/^LUN / { in1 = $2 == l }
		in1 && /^  path       in [0-9.]+, to submit [0-9.]+, backend [0-9]+\.[0-9]/ {
			sub(/.*, backend /, ""); sub(/\..*/, ""); print }' <<<"$OUT")
	[ -n "$b" ] && [ "$b" -ge 2500 ] ||
		fail "text stats print no path line with the 5 ms backend: $OUT"
	ctl lun remove "$IQN/1" || fail "lun remove failed: $OUT"
}

set_queue_depth_live_then_reset_zeroes() {
	need_tool jq
	ctl set 0 queue_depth=4 || fail "set queue_depth failed"
	ctl luns --json || fail "luns failed"
	jqv '.luns[0].queue_depth == 4' || fail "queue_depth not changed"
	ok "queue_depth=4 applied"
	ctl reset || fail "reset failed"
	ctl stats --json || fail "stats after reset failed"
	jqv '.luns[0].commands.total == 0 and .luns[0].inflight.peak == 0' ||
		fail "reset left counts behind"
	ok "reset zeroes the counts"
}

sessions_json_lists_live_session() {
	need_tool jq
	hold_session
	ctl sessions --json || fail "sessions --json failed"
	jqv '.count >= 1' || fail "no session counted"
	printf '%s\n' "$OUT" | jq -e --arg iqn "$TCQD_IQN" \
		'.sessions[0] | .target == $iqn and .type == "normal" and
		 (.initiator | length) > 0 and (.isid | length) == 12 and .tsih > 0 and
		 (.peer | startswith("127.0.0.1:")) and
		 .params.MaxRecvDataSegmentLength > 0' >/dev/null ||
		fail "session listing lacks fields"
	ok "a live session is listed with its fields"
	end_hold
}

live_queue_depth_caps_peak_in_flight() {
	need_tool jq
	ctl set 0 queue_depth=4 || fail "set queue_depth failed"
	ctl reset || fail "reset failed"
	bench --rw randread --bs 4k --depth 32 || fail "depth-32 load failed"
	ctl stats --json || fail "stats failed"
	jqv '.luns[0].commands.total > 0' || fail "no commands in the depth-32 load"
	jqv '.luns[0].inflight.peak >= 1 and .luns[0].inflight.peak <= 4' ||
		fail "peak in flight exceeds the live queue_depth of 4"
	ok "live queue_depth=4 caps the peak in flight: $(printf '%s' "$OUT" | jq .luns[0].inflight.peak)"
	ctl set 0 queue_depth=32 || fail "set back failed"
	tcqd_alive
}

barrier_flush_live_issues_flushes() {
	need_tool jq
	ctl set 0 queue_depth=32 barrier=flush || fail "set barrier=flush failed"
	ctl reset || fail "reset failed"
	bench --rw randwrite --bs 4k --depth 8 --ordered 50 ||
		fail "ORDERED write load failed"
	ctl stats --json || fail "stats failed"
	jqv '.luns[0].commands.ordered > 0 and .luns[0].ordered_drain_us.count > 0' ||
		fail "ORDERED tasks not counted"
	jqv '.luns[0].flushes.barrier > 0' || fail "barrier=flush issued no flushes"
	ok "barrier=flush: $(printf '%s' "$OUT" | jq .luns[0].flushes.barrier) barrier flushes"
	ctl set 0 barrier=drain || fail "set back failed"
}

barrier_ignore_live_runs_ordered_as_simple() {
	need_tool jq
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
}

# ---- plain text: what a user reads (no jq) ----------------------------------
# After one session (rawcdb: login, no command of its own) sends N
# commands. Its first ends in the new nexus' unit attention and is sent
# again: N + 1 arrive, N complete.
text_stats_counts_exactly() {
	ctl reset || fail "reset failed"
	line "ok"
	run "$RAWCDB" "$TCQD_URL" $TUR $TUR "$READ8" "$READ8" "$READ8" ||
		fail "rawcdb failed"
	ctl stats || fail "tcqctl stats failed"
	line "  commands   total 6: simple 6, ordered 0, head of queue 0, aca 0; completed 5"
	grep -Eq '^  in flight  now 0, peak [1-9][0-9]* \(backend I/Os [1-9][0-9]*\)$' <<<"$OUT" ||
		fail "no in-flight line with the READs' peak and backend I/Os"
	ok "in flight: none now, the READs' peak and backend I/Os"
	grep -Eq '^  latency    p50 [0-9.]+ us, p99 [0-9.]+ us, p99\.9 [0-9.]+ us \(5 commands, arrival to completion\)$' <<<"$OUT" ||
		fail "no latency line over the 5 completed commands"
	ok "latency percentiles over the 5 completed commands"
	line "  ordered    0 drained: total 0.0 us, mean 0.0 us, p99 0.0 us, max 0.0 us"
}

text_reset_zeroes_what_stats_shows() {
	run "$RAWCDB" "$TCQD_URL" $TUR || fail "rawcdb failed"
	ctl reset || fail "reset failed"
	line "ok"
	ctl stats || fail "tcqctl stats failed"
	line "  commands   total 0: simple 0, ordered 0, head of queue 0, aca 0; completed 0"
	line "  flushes    0 (0 for barriers)"
}

# The defaults: queue_depth 128, barrier drain, write cache on.
text_luns_shows_the_settings() {
	ctl luns || fail "tcqctl luns failed"
	line "LUN $IQN/0  aio  131072 x 512 B  queue_depth 128  barrier drain  write_cache on"
}

text_set_prints_the_new_settings() {
	ctl set 0 queue_depth=8 barrier=flush write_cache=off || fail "set failed"
	line "LUN $IQN/0  aio  131072 x 512 B  queue_depth 8  barrier flush  write_cache off"
	ctl set 0 queue_depth=128 barrier=drain write_cache=on || fail "set back failed"
	line "LUN $IQN/0  aio  131072 x 512 B  queue_depth 128  barrier drain  write_cache on"
}

text_sessions_none_when_idle() {
	ctl sessions || fail "tcqctl sessions failed"
	line "no sessions"
}

text_sessions_lists_live_session() {
	local re
	hold_session
	ctl sessions || fail "tcqctl sessions failed"
	re="^TSIH [1-9][0-9]*  normal  $INITIATOR  ISID [0-9a-f]{12}  target $IQN  peer 127\\.0\\.0\\.1:[0-9]+  reactor [01]\$"
	grep -Eq "$re" <<<"$OUT" || fail "no session line with TSIH, initiator, ISID, target and peer"
	ok "the session line names TSIH, initiator, ISID, target, peer and reactor"
	grep -Eq '^    .* MaxRecvDataSegmentLength=[0-9]+( |$)' <<<"$OUT" ||
		fail "no negotiated parameters under the session"
	ok "its negotiated parameters follow"
	end_hold
}

# ---- bad requests -----------------------------------------------------------
# refused WORDS ARGS...: tcqctl ARGS must fail, its message naming WORDS.
refused() {
	local want=$1 rc=0
	shift
	run "$TCQCTL" -s "$SOCK" "$@" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl $*: status $rc, expected 1"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: message lacks '$want'"
	ok "tcqctl $* refused: '$want'"
}
bad_queue_depth_0_refused() { refused "queue_depth" set 0 queue_depth=0; }
bad_queue_depth_2000_refused() { refused "queue_depth" set 0 queue_depth=2000; }
bad_barrier_value_refused() { refused "barrier" set 0 barrier=sometimes; }
bad_write_cache_value_refused() { refused "write_cache" set 0 write_cache=maybe; }
unknown_setting_refused() { refused "unknown key 'colour'" set 0 colour=blue; }
missing_lun_refused() { refused "no LUN 7" set 7 queue_depth=1; }
missing_target_refused() { refused "no target" set iqn.2026-11.org.tcq:nope/0 barrier=drain; }
unknown_command_refused() { refused "unknown command" frobnicate; }
crash_of_non_cache_lun_refused() { refused "crash" crash 0; }
missing_socket_refused() { refused "cannot connect" -s "$TEST_TMP/nope.sock" stats; }

no_command_is_a_usage_error_2() {
	local rc=0
	run "$TCQCTL" -s "$SOCK" || rc=$?
	[ "$rc" -eq 2 ] || fail "tcqctl without a command: status $rc, expected 2"
	ok "tcqctl without a command exits 2"
}

refused_requests_change_nothing() {
	local before
	ctl luns || fail "luns failed"
	before=$OUT
	refused "queue_depth" set 0 barrier=flush queue_depth=0
	refused "write_cache" set 0 queue_depth=9 write_cache=maybe
	ctl luns || fail "luns failed"
	[ "$OUT" = "$before" ] || fail "settings changed: '$before' -> '$OUT'"
	ok "a refused request leaves every setting as it was"
}

# After the group: tcqd has exited.
control_socket_removed_at_exit() {
	[ -e "$SOCK" ] && fail "control socket left behind after exit"
	ok "no control socket left behind"
}

# ---- crash on a cache backend (durability.sh checks what survives) ---------
fixture_cache() {
	make_lun "$TEST_TMP/cache.img" 16M
	start_tcqd --ctl "$SOCK" --export "$TEST_TMP/cache.img" --size 16M \
		--backend cache:writeback=0,base=aio
}

# The cache holds what no FUA or SYNCHRONIZE CACHE made durable: after a
# flush, 8 + 3 blocks written without FUA are exactly what a crash drops.
crash_drops_exactly_the_unsaved_blocks() {
	need_tool jq
	bench --engine libiscsi --rw randwrite --bs 4k --depth 4 ||
		fail "write load on the cache backend failed"
	run "$SCSICMD" "$TCQD_URL" sync write 100 8 a1 nofua write 300 3 b2 nofua ||
		fail "scsicmd failed"
	[ "$OUT" = $'GOOD\nGOOD\nGOOD' ] || fail "sync and writes: $OUT"
	ctl --json crash 0 || fail "tcqctl crash failed"
	jqv '.ok == true and .dropped_blocks == 11' ||
		fail "crash: want 11 dropped blocks"
	ok "crash dropped the 11 unsaved blocks"
	ctl crash 0 || fail "second crash failed"
	line "crashed: 0 unsaved blocks dropped"
}

text_crash_reports_the_count() {
	run "$SCSICMD" "$TCQD_URL" sync write 500 1 c3 nofua || fail "scsicmd failed"
	ctl crash 0 || fail "tcqctl crash failed"
	line "crashed: 1 unsaved block dropped"
}

cache_lun_serves_reads_after_crash() {
	bench --engine libiscsi --rw randread --bs 4k --depth 4 ||
		fail "the LUN does not serve reads after a crash"
	ok "the LUN serves reads after a crash"
	tcqd_alive
}

CHECKS=(
	@ctl
	control_socket_mode_0600
	text_sessions_none_when_idle
	text_luns_shows_the_settings
	text_stats_counts_exactly
	text_reset_zeroes_what_stats_shows
	text_set_prints_the_new_settings
	text_sessions_lists_live_session
	stats_json_counts_the_load
	path_breakdown_finds_the_slow_stage
	set_queue_depth_live_then_reset_zeroes
	sessions_json_lists_live_session
	live_queue_depth_caps_peak_in_flight
	barrier_flush_live_issues_flushes
	barrier_ignore_live_runs_ordered_as_simple
	bad_queue_depth_0_refused
	bad_queue_depth_2000_refused
	bad_barrier_value_refused
	bad_write_cache_value_refused
	unknown_setting_refused
	missing_lun_refused
	missing_target_refused
	unknown_command_refused
	crash_of_non_cache_lun_refused
	missing_socket_refused
	no_command_is_a_usage_error_2
	refused_requests_change_nothing
	@
	control_socket_removed_at_exit
	@cache
	crash_drops_exactly_the_unsaved_blocks
	text_crash_reports_the_count
	cache_lun_serves_reads_after_crash
)
run_checks "$@"
