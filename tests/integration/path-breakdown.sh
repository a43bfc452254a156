#!/bin/bash
# shellcheck disable=SC2317  # checks run by run_checks in subshells
# scripts/path-breakdown, the pipeline only: one round of 1 s points on a
# 64 MiB file of random data must print a row for fio and for tcqd on the
# file and on null at each point, every stage a number; on null, the
# backend stage is 0 (the null backend completes in the pass that
# submitted), on the file it is not. Nothing here judges the figures.
#
# Opt-in (fio is not among scripts/install-deps' packages):
#   make check TESTS=tests/integration/path-breakdown.sh
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

PB=$top_srcdir/scripts/path-breakdown
need_built "$TCQD" "$top_builddir/tcq-bench" "$top_builddir/tcqctl"
listing "$@" || need_tool python3 fio jq

IMG=$TEST_TMP/read.img

path_breakdown_one_round() {
	dd if=/dev/urandom of="$IMG" bs=1M count=64 status=none ||
		fail "cannot write $IMG"
	CLIENT_TIMEOUT=300 run "$PB" --tcqd "$top_builddir" --rounds 1 \
		--runtime 1 --file "$IMG" --point rr4k-qd1:randread:4k:1 \
		--point r128k-qd4:read:128k:4 || fail "scripts/path-breakdown failed"
	printf '%s\n' "$OUT" >"$TEST_TMP/table.md"
	local p who
	for p in rr4k-qd1 r128k-qd4; do
		grep -qE "^\| $p \| fio \(local\) \| [0-9]+ \| [0-9.]+ \|.*\| [0-9.]+ \+ [0-9.]+ \|$" \
			"$TEST_TMP/table.md" || fail "$p: no fio row"
		for who in tcqd tcqd-null; do
			grep -qE "^\| $p \| $who \| [0-9]+ \| [0-9.]+( \| -?[0-9.]+){6} \|$" \
				"$TEST_TMP/table.md" || fail "$p: no $who row of numbers"
		done
		# column 7 is the backend stage
		awk -F' [|] ' -v p="$p" '$1 == "| " p && $2 == "tcqd-null" &&
			$7 != "0.0" { bad = 1 } END { exit bad }' "$TEST_TMP/table.md" ||
			fail "$p: the null backend shows a backend stage"
		awk -F' [|] ' -v p="$p" '$1 == "| " p && $2 == "tcqd" &&
			$7 + 0 > 0 { ok = 1 } END { exit !ok }' "$TEST_TMP/table.md" ||
			fail "$p: the file shows no backend stage"
	done
	ok "a row of numbers for fio, tcqd and tcqd on null at both points"
}

path_breakdown_refuses_bad_options() {
	local rc=0
	run "$PB" --runtime 0 || rc=$?
	[ "$rc" = 2 ] || fail "--runtime 0: status $rc, expected 2"
	rc=0
	run "$PB" --point rr4k || rc=$?
	[ "$rc" = 2 ] || fail "--point rr4k: status $rc, expected 2"
	ok "--runtime 0 and --point rr4k refused with status 2"
}

CHECKS=(
	path_breakdown_refuses_bad_options
	path_breakdown_one_round
)
run_checks "$@"
