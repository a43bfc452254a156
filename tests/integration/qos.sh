#!/bin/bash
# Per-LUN QoS (qos_iops, qos_mbps; tcqd.conf(5)) on a live tcqd driven by
# tcq-bench, asserted by counts, never by time: a limited LUN delays
# commands (tcqctl stats and the metrics count them) and every command
# still completes, with no error; tcqctl luns shows the limits; removed
# live under a load that the old limit would hold for minutes, the load
# ends at once in its one session (no session dropped); two initiators
# sharing a limit each complete; a session lost while commands are held
# frees them and the LUN serves on; config (what save
# writes) and save keep the live limits; a bad value (negative,
# fractional, not a number, too large) is refused by its key's name, live
# and in a file, and changes nothing.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$TCQCTL" "$BENCH"
need_tool jq

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:qos
INITIATOR=iqn.2026-11.org.tcq:qos-bench

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }
bench() {
	run "$BENCH" --quiet --initiator-name "$INITIATOR" --ramp 0 "$@" \
		"$TCQD_URL"
}

# qos_counts: DELAYED and HELD of LUN 0 from tcqctl stats --json.
qos_counts() {
	ctl --json stats || fail "tcqctl stats failed: $OUT"
	DELAYED=$(jq -e '.luns[0].qos.delayed' <<<"$OUT") ||
		fail "tcqctl stats has no qos.delayed: $OUT"
	HELD=$(jq -e '.luns[0].qos.held' <<<"$OUT") ||
		fail "tcqctl stats has no qos.held: $OUT"
}

# limits_are IOPS MBPS: what tcqctl luns (JSON) says the limits are.
limits_are() {
	local got
	ctl --json luns || fail "tcqctl luns failed: $OUT"
	got=$(jq -r '.luns[0] | "\(.qos_iops) \(.qos_mbps)"' <<<"$OUT")
	[ "$got" = "$1 $2" ] || fail "tcqctl luns: qos_iops qos_mbps = $got, expected $1 $2"
}

fixture_qos() {
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK"
		printf '\n[target %s]\n[lun %s 0]\nbackend = null\nsize = 64M\n' "$T" "$T"
		printf 'qos_iops = 200\nqos_mbps = 2\n'
	} >"$CONF"
	start_tcqd -c "$CONF"
}

luns_shows_the_limits() {
	limits_are 200 2
	ctl luns || fail "tcqctl luns failed"
	grep -qxF '  qos      iops 200  MB/s 2' <<<"$OUT" ||
		fail "tcqctl luns shows no qos line: $OUT"
	ok "tcqctl luns shows qos_iops 200 and qos_mbps 2"
}

# 400 reads of 4 KiB at depth 16 against a bucket of 10 commands: most
# wait, and each one completes.
limited_reads_are_delayed_and_all_complete() {
	local d0 ios errors
	qos_counts
	d0=$DELAYED
	bench --rw randread --bs 4k --depth 16 --ios 400 \
		--json "$TEST_TMP/r.json" || fail "tcq-bench failed: $OUT"
	ios=$(jq -e '.points[0].ios' "$TEST_TMP/r.json") || fail "no ios in the JSON"
	errors=$(jq -e '.points[0].errors | if type == "object" then ([.[]] | add) else . end' \
		"$TEST_TMP/r.json") || fail "no errors in the JSON"
	[ "$ios" -eq 400 ] || fail "tcq-bench did $ios reads, expected 400"
	[ "$errors" -eq 0 ] || fail "tcq-bench saw $errors errors"
	qos_counts
	[ $((DELAYED - d0)) -gt 0 ] || fail "qos.delayed did not grow ($d0 -> $DELAYED)"
	[ "$HELD" -eq 0 ] || fail "$HELD commands still held with no load"
	ok "400 reads complete without error; QoS delayed $((DELAYED - d0)) of them, holds none after"
}

# Large reads under the MB/s limit: 1 MiB each, more than the 100 KB
# bucket; they are delayed, and none is held forever.
large_reads_under_a_small_mbps_complete() {
	local d0 ios
	ctl set 0 qos_iops=0 || fail "set: $OUT"
	qos_counts
	d0=$DELAYED
	bench --rw read --bs 1m --depth 4 --ios 8 --json "$TEST_TMP/l.json" ||
		fail "tcq-bench 1m failed: $OUT"
	ios=$(jq -e '.points[0].ios' "$TEST_TMP/l.json") || fail "no ios in the JSON"
	[ "$ios" -eq 8 ] || fail "tcq-bench did $ios reads of 1 MiB, expected 8"
	qos_counts
	[ $((DELAYED - d0)) -ge 6 ] ||
		fail "only $((DELAYED - d0)) of 8 reads of 1 MiB were delayed under 2 MB/s"
	ok "8 reads of 1 MiB under qos_mbps = 2 (a 100 KB bucket) all complete, $((DELAYED - d0)) delayed"
}

metrics_count_the_delayed() {
	qos_counts
	ctl metrics || fail "tcqctl metrics failed"
	grep -qE "^tcq_lun_qos_delayed_total\{target=\"$T\",lun=\"0\"\} $DELAYED\$" <<<"$OUT" ||
		fail "tcq_lun_qos_delayed_total is not $DELAYED: $(grep qos <<<"$OUT")"
	grep -qE "^tcq_lun_qos_held\{target=\"$T\",lun=\"0\"\} 0\$" <<<"$OUT" ||
		fail "tcq_lun_qos_held is not 0: $(grep qos <<<"$OUT")"
	ok "tcq_lun_qos_delayed_total = $DELAYED, tcq_lun_qos_held = 0"
}

# qos_iops = 1: 300 reads would take five minutes. Removed live while
# they run, they end in the session that started them.
live_removal_releases_a_held_load() {
	local pid rc=0 ios
	ctl set 0 qos_iops=1 qos_mbps=0 || fail "set: $OUT"
	limits_are 1 0
	local logins0
	logins0=$(logins)
	"$BENCH" --quiet --initiator-name "$INITIATOR" --ramp 0 --rw randread \
		--bs 4k --depth 8 --ios 300 --json "$TEST_TMP/b.json" \
		"$TCQD_URL" >"$TEST_TMP/b.out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	wait_logins $((logins0 + 1))
	wait_until 100 held_some || fail "no command held under qos_iops = 1"
	ctl set 0 qos_iops=0 || fail "set qos_iops=0: $OUT"
	limits_are 0 0
	timeout 60 tail --pid="$pid" -f /dev/null || fail "tcq-bench still runs 60 s after the limit was removed"
	wait "$pid" || rc=$?
	unset 'BG_PIDS[-1]'
	[ "$rc" -eq 0 ] || fail "tcq-bench ended with $rc: $(cat "$TEST_TMP/b.out")"
	ios=$(jq -e '.points[0].ios' "$TEST_TMP/b.json") || fail "no ios in the JSON"
	[ "$ios" -eq 300 ] || fail "tcq-bench did $ios reads, expected 300"
	[ "$(logins)" -eq $((logins0 + 1)) ] ||
		fail "$(($(logins) - logins0)) logins for one tcq-bench session: a session was dropped"
	qos_counts
	[ "$HELD" -eq 0 ] || fail "$HELD still held"
	ok "removed live, the held load ends: 300 reads in its one session, none held"
}
held_some() { qos_counts; [ "$HELD" -gt 0 ]; }
held_none() { qos_counts; [ "$HELD" -eq 0 ]; }
session_ended() { [ "$(grep -c ': session TSIH [0-9]* ended' "$TCQD_LOG")" -gt "$ENDED0" ]; }

# Two initiators (two tcq-bench processes, sessions that may live on
# either reactor) share a limit: each completes every read, none fails.
two_initiators_share_a_limit_and_complete() {
	local a b rc=0 d0
	ctl set 0 qos_iops=300 qos_mbps=0 || fail "set: $OUT"
	qos_counts
	d0=$DELAYED
	for who in a b; do
		"$BENCH" --quiet --initiator-name "$INITIATOR-$who" --ramp 0 \
			--rw randread --bs 4k --depth 16 --ios 300 \
			--json "$TEST_TMP/$who.json" "$TCQD_URL" >"$TEST_TMP/$who.out" 2>&1 &
		BG_PIDS+=("$!")
	done
	b=${BG_PIDS[-1]}
	a=${BG_PIDS[-2]}
	wait "$a" || rc=$?
	wait "$b" || rc=$?
	unset 'BG_PIDS[-1]' 'BG_PIDS[-2]'
	[ "$rc" -eq 0 ] || fail "a tcq-bench failed: $(cat "$TEST_TMP/a.out" "$TEST_TMP/b.out")"
	for who in a b; do
		[ "$(jq -e '.points[0].ios' "$TEST_TMP/$who.json")" -eq 300 ] ||
			fail "initiator $who did not complete its 300 reads"
		[ "$(jq -e '.points[0].errors' "$TEST_TMP/$who.json")" -eq 0 ] ||
			fail "initiator $who saw errors"
	done
	qos_counts
	[ $((DELAYED - d0)) -gt 0 ] || fail "nothing delayed under qos_iops = 300"
	[ "$HELD" -eq 0 ] || fail "$HELD still held"
	ok "two initiators sharing qos_iops = 300 complete 300 reads each, $((DELAYED - d0)) delayed"
}

# A session lost (its initiator killed) while QoS holds its commands (31
# of them under qos_iops = 1: half a minute to drain by themselves):
# they are freed with it (I_T nexus loss), and the LUN serves on.
held_commands_of_a_lost_session_are_freed() {
	local pid logins0
	ctl set 0 qos_iops=1 qos_mbps=0 || fail "set: $OUT"
	logins0=$(logins)
	ENDED0=$(grep -c ': session TSIH [0-9]* ended' "$TCQD_LOG" || true)
	"$BENCH" --quiet --initiator-name "$INITIATOR-lost" --ramp 0 \
		--rw randwrite --bs 4k --depth 32 --ios 300 "$TCQD_URL" \
		>"$TEST_TMP/lost.out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	wait_logins $((logins0 + 1))
	wait_until 100 held_some || fail "no command held under qos_iops = 1"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	unset 'BG_PIDS[-1]'
	# the session's end aborts its tasks (the log line comes just before)
	wait_until 100 session_ended || fail "tcqd did not end the lost session"
	wait_until 10 held_none || fail "$HELD commands still held after their session ended"
	ctl set 0 qos_iops=0 || fail "set qos_iops=0: $OUT"
	bench --rw randread --bs 4k --depth 4 --ios 50 --json "$TEST_TMP/after.json" ||
		fail "tcq-bench after the lost session failed: $OUT"
	ok "the lost session's held commands are freed (none held), and the LUN serves on"
}

config_and_save_keep_the_limits() {
	ctl set 0 qos_iops=2000 qos_mbps=50 || fail "set: $OUT"
	limits_are 2000 50
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config failed"
	grep -qx 'qos_iops = 2000' <<<"$OUT" || fail "config lacks qos_iops = 2000: $OUT"
	grep -qx 'qos_mbps = 50' <<<"$OUT" || fail "config lacks qos_mbps = 50: $OUT"
	ctl save "$TEST_TMP/saved.conf" || fail "save: $OUT"
	grep -qx 'qos_iops = 2000' "$TEST_TMP/saved.conf" || fail "the saved file lacks qos_iops = 2000"
	grep -qx 'qos_mbps = 50' "$TEST_TMP/saved.conf" || fail "the saved file lacks qos_mbps = 50"
	ok "tcqctl config and save write qos_iops = 2000, qos_mbps = 50"
}

# refused WANT ARGS...: tcqctl ARGS fails (status 1) naming WANT, and the
# limits are still 2000 and 50.
refused() {
	local want=$1 rc=0
	shift
	ctl "$@" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl $*: status $rc, expected 1"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: message lacks '$want': $OUT"
	local msg=$OUT
	limits_are 2000 50
	ok "tcqctl $* refused: $msg; the limits are unchanged"
}
negative_iops_refused() { refused qos_iops set 0 qos_iops=-5; }
fractional_mbps_refused() { refused qos_mbps set 0 qos_mbps=1.5; }
non_numeric_iops_refused() { refused qos_iops set 0 qos_iops=fast; }
huge_iops_refused() { refused qos_iops set 0 qos_iops=99999999999; }
huge_mbps_refused() { refused qos_mbps set 0 qos_mbps=100001; }
refused_whole_with_a_good_key() { refused qos_mbps set 0 qos_iops=10 qos_mbps=x; }

bad_limit_in_a_file_names_its_key() {
	{
		printf '[global]\nlisten = 127.0.0.1:0\n'
		printf '[target %s]\n[lun %s 0]\nbackend = null\nsize = 1M\n' "$T" "$T"
		printf 'qos_mbps = -1\n'
	} >"$TEST_TMP/bad.conf"
	conf_refused "$TEST_TMP/bad.conf" ".*qos_mbps" "qos_mbps = -1"
	ok "tcqd refuses the file: $OUT"
}

CHECKS=(
	@qos
	luns_shows_the_limits
	limited_reads_are_delayed_and_all_complete
	large_reads_under_a_small_mbps_complete
	metrics_count_the_delayed
	live_removal_releases_a_held_load
	two_initiators_share_a_limit_and_complete
	held_commands_of_a_lost_session_are_freed
	config_and_save_keep_the_limits
	negative_iops_refused
	fractional_mbps_refused
	non_numeric_iops_refused
	huge_iops_refused
	huge_mbps_refused
	refused_whole_with_a_good_key
	bad_limit_in_a_file_names_its_key
)
run_checks "$@"
