#!/bin/bash
# conformance.sh SUITE...: libiscsi's conformance suite (iscsi-test-cu)
# against a fresh tcqd with a 128 MiB sparse LUN, one run per suite.
# Prints each CUnit run summary and the totals; fails on any failed test,
# failed suite or an iscsi-test-cu that could not run.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-test-cu
[ $# -gt 0 ] || fail "usage: conformance.sh SUITE..."
: "${CONFORMANCE_TIMEOUT:=300}"

make_lun "$TEST_TMP/lun0.img" 128M
start_tcqd --export "$TEST_TMP/lun0.img" --size 128M \
	--iqn iqn.2026-11.org.tcq:conformance

declare -A total=()
for k in tests_run tests_passed tests_failed tests_inactive asserts_run \
	asserts_failed suites_failed skipped; do
	total[$k]=0
done
bad_suites=()

for suite in "$@"; do
	say "===== $suite ====="
	log=$TEST_TMP/cu-${suite//\//_}.log
	rc=0
	CLIENT_TIMEOUT=$CONFORMANCE_TIMEOUT tc iscsi-test-cu -d \
		-i "$INITIATOR" -I "$INITIATOR2" --test="$suite" "$TCQD_URL" \
		>"$log" 2>&1 || rc=$?
	cat "$log"
	# CUnit's basic summary:
	#   Run Summary:    Type  Total    Ran Passed Failed Inactive
	#                 suites      1      1    n/a      0        0
	#                  tests      5      5      4      1        0
	#                asserts     20     20     19      1      n/a
	summary=$(awk '/^Run Summary:/ {on = 1; next}
		on && ($1 == "suites" || $1 == "tests" || $1 == "asserts") {
			print $1, $2, $3, $4, $5, $6 }' "$log")
	if [ -z "$summary" ]; then
		[ "$rc" -eq 124 ] && say "iscsi-test-cu timed out"
		say "$suite: no CUnit summary (status $rc)"
		bad_suites+=("$suite")
		continue
	fi
	read -r _ _ _ _ s_failed _ <<<"$(grep '^suites' <<<"$summary")"
	read -r _ _ t_run t_passed t_failed t_inactive <<<"$(grep '^tests' <<<"$summary")"
	read -r _ _ a_run _ a_failed _ <<<"$(grep '^asserts' <<<"$summary")"
	# A test skipped itself when [SKIPPED] comes between its "Test: X ..."
	# and its result; the same message after the result comes from the
	# suite's set-up or tear-down probes and is not a skipped test.
	awk '/^Suite:|^Run Summary/ { intest = 0 }
		/^  Test: / { name = $2; counted = 0
			intest = ($0 !~ /\.\.\.(passed|FAILED)/) }
		intest && /\[SKIPPED\]/ && !counted {
			print name ": " substr($0, index($0, "[SKIPPED]"))
			counted = 1 }
		intest && /^(passed|FAILED)/ { intest = 0 }' "$log" \
		>"$log.skipped"
	n_skip=$(wc -l <"$log.skipped")
	say "$suite: tests run $t_run, passed $t_passed, failed $t_failed, inactive $t_inactive; asserts run $a_run, failed $a_failed; skipped $n_skip; status $rc"
	total[tests_run]=$((total[tests_run] + t_run))
	total[tests_passed]=$((total[tests_passed] + t_passed))
	total[tests_failed]=$((total[tests_failed] + t_failed))
	total[tests_inactive]=$((total[tests_inactive] + t_inactive))
	total[asserts_run]=$((total[asserts_run] + a_run))
	total[asserts_failed]=$((total[asserts_failed] + a_failed))
	total[suites_failed]=$((total[suites_failed] + s_failed))
	total[skipped]=$((total[skipped] + n_skip))
	if [ "$t_failed" -ne 0 ] || [ "$s_failed" -ne 0 ] || [ "$rc" -ne 0 ] ||
		[ "$t_run" -eq 0 ]; then
		bad_suites+=("$suite")
	fi
done

say "===== summary ====="
say "suites $#, failed or not run: ${#bad_suites[@]}${bad_suites[*]:+ (${bad_suites[*]})}"
say "tests run ${total[tests_run]}, passed ${total[tests_passed]}, failed ${total[tests_failed]}, inactive ${total[tests_inactive]}"
say "asserts run ${total[asserts_run]}, failed ${total[asserts_failed]}; suite init failures ${total[suites_failed]}"
say "tests that skipped themselves ([SKIPPED], counted as passed by CUnit): ${total[skipped]}"
if [ "${total[skipped]}" -gt 0 ]; then
	cat "$TEST_TMP"/cu-*.log.skipped | sed 's/^/    /'
fi

stop_tcqd
[ "${#bad_suites[@]}" -eq 0 ] || fail "conformance failures in: ${bad_suites[*]}"
pass "all checks passed"
