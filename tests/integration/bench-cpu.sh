#!/bin/bash
# shellcheck disable=SC2317  # checks run by run_checks in subshells
# tcq-bench --initiator-cpu CMD_US[,BYTE_NS] (--initiator-cpus N): each
# command costs a modelled initiator CPU CMD_US us plus BYTE_NS ns per
# byte, on N CPUs the sessions share, and is sent only once that time
# has passed. So a point's IOPS can never exceed N / cost: command k of a
# CPU is sent no earlier than k costs after the point started, and the
# point's time runs to its last completion. The null backend does many
# times these rates here, so without the model the ceilings are broken;
# a slow host can only stay further below them (no speed floor). Bad
# values are refused naming the option.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$BENCH"
listing "$@" || need_tool jq

fixture_null() { start_tcqd --backend null --export null0 --size 64M; }

# under_ceiling NAME IOPS ARGS...: a 0.5 s point with ARGS; its IOPS must
# be above 0 and at most IOPS (to 1 part in 1000, the rounding of a
# nanosecond cost), without errors. Leaves the IOPS in $TEST_TMP/NAME.iops.
under_ceiling() {
	local name=$1 cap=$2 iops
	shift 2
	run "$BENCH" --quiet --runtime 0.5 --json "$TEST_TMP/$name.json" "$@" \
		"$TCQD_URL" || fail "tcq-bench $* failed"
	iops=$(jq '.points[0].iops' "$TEST_TMP/$name.json") ||
		fail "no IOPS in tcq-bench's JSON"
	jq -e '.points[0].errors == 0 and .points[0].ios > 0' \
		"$TEST_TMP/$name.json" >/dev/null ||
		fail "errors or no I/O: $(cat "$TEST_TMP/$name.json")"
	awk -v v="$iops" -v c="$cap" 'BEGIN { exit !(v > 0 && v <= c * 1.001) }' ||
		fail "$iops IOPS with $*: above the model's ceiling of $cap"
	echo "$iops" >"$TEST_TMP/$name.iops"
}

# 1 ms a command on one CPU: at most 1000 IOPS, whatever the depth and
# the number of sessions (16 slots want more).
one_cpu_caps_iops_at_one_over_cost() {
	under_ceiling one 1000 --rw randread --bs 4k --depth 8 \
		--sessions 2 --threads 2 --initiator-cpu 1000
	ok "--initiator-cpu 1000 (1 ms, one CPU): $(cat "$TEST_TMP/one.iops") IOPS, at most 1000"
}

# 50 us + 20 ns/byte x 65536 bytes = 1360.72 us a 64K command; two CPUs:
# at most 2 / 1360.72 us = 1469.81 IOPS.
per_byte_cost_on_two_cpus() {
	under_ceiling two 1469.81 --rw read --bs 64k --depth 4 \
		--sessions 2 --initiator-cpu 50,20 --initiator-cpus 2
	ok "--initiator-cpu 50,20 --initiator-cpus 2 at 64K: $(cat "$TEST_TMP/two.iops") IOPS, at most 1469.81"
}

# A slot waiting for its CPU time has not sent a command yet, so --ios
# counts only what was sent: exactly N I/Os (not fewer, as when each wait
# took one from the budget).
ios_counts_only_sent_commands() {
	run "$BENCH" --quiet --rw randread --bs 4k --depth 8 --ios 200 \
		--initiator-cpu 200 --json "$TEST_TMP/ios.json" "$TCQD_URL" ||
		fail "tcq-bench --ios 200 --initiator-cpu 200 failed"
	jq -e '.points[0].ios == 200 and .points[0].errors == 0' \
		"$TEST_TMP/ios.json" >/dev/null ||
		fail "--ios 200 with the CPU model: $(jq -c '.points[0] | {ios, errors}' "$TEST_TMP/ios.json")"
	ok "--ios 200 with --initiator-cpu 200 does exactly 200 I/Os"
}

bad_values_refused() {
	local a opt
	for a in "--initiator-cpu 0" "--initiator-cpu x" "--initiator-cpu 5,-1" \
		"--initiator-cpu 2000000" "--initiator-cpu 5 --initiator-cpus 65" \
		"--initiator-cpu 5 --initiator-cpus 1.5"; do
		# shellcheck disable=SC2086  # the words of $a are the options
		if run "$BENCH" $a iscsi://127.0.0.1:1/iqn.x/0; then
			fail "tcq-bench $a was accepted"
		fi
		# the last option given is the bad one: "NAME VALUE" at the end
		opt=${a% *} opt=${opt##* }
		grep -qF "bad value for $opt: '${a##* }'" <<<"$OUT" ||
			fail "tcq-bench $a refused without naming $opt and its value"
	done
	if run "$BENCH" --initiator-cpus 2 iscsi://127.0.0.1:1/iqn.x/0; then
		fail "--initiator-cpus without --initiator-cpu was accepted"
	fi
	grep -qF -- "--initiator-cpus needs --initiator-cpu" <<<"$OUT" ||
		fail "no reason given"
	if run "$BENCH" --initiator-cpu 5 --rw journal iscsi://127.0.0.1:1/iqn.x/0; then
		fail "--initiator-cpu with --rw journal was accepted"
	fi
	grep -qF -- "--initiator-cpu does not apply to --rw journal" <<<"$OUT" ||
		fail "no reason given"
	ok "bad --initiator-cpu and --initiator-cpus values are refused naming the option"
}

CHECKS=(
	@null
	one_cpu_caps_iops_at_one_over_cost
	per_byte_cost_on_two_cpus
	ios_counts_only_sent_commands
	@
	bad_values_refused
)
run_checks "$@"
