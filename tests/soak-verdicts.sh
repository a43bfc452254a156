#!/bin/bash
# The soak's verdicts (scripts/lib/soak-verdicts) kept honest: the faults
# scripts/soak exists to find were each planted once by hand when it was
# written; here each is handed to the same verdicts as made-up results of
# a run (the files and samples scripts/soak gathers), and must fail its
# own verdict, while a clean run passes every one. Prints TAP.
set -u
set -o pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
# shellcheck source=tests/tap.sh
. "$top_srcdir/tests/tap.sh"
# shellcheck source=scripts/lib/soak-verdicts
. "$top_srcdir/scripts/lib/soak-verdicts"

# clean_run DIR: the files of a run where everything held: a verified
# tcq-bench run that exited 0 (2 reconnects), a tmfload pass, a TARGET
# COLD RESET that passed.
clean_run() {
	mkdir -p "$1"
	printf 'randrw 4k ... 0 verify mismatches\n' >"$1/bench.1.out"
	echo 0 >"$1/bench.1.rc"
	printf '{"points": [{"reconnects": 2, "outage_s": 1.5}]}\n' >"$1/bench.1.json"
	printf 'tmfload: case resets_under_load: passed\n' >"$1/tmfload.out"
	printf 'tmf: target_cold_reset_closes_every_connection: passed\n' >"$1/cold.out"
	: >"$1/tcqd.log"
}

# lines_result RC NAME TEXT: result with each line of TEXT a diagnostic.
lines_result() {
	local rc=$1 name=$2 d
	mapfile -t d <<<"$3"
	result "$rc" "$name" "${d[@]}"
}

# verdicts DIR [VAR=VALUE...]: soak_verdicts on the run in DIR, with the
# samples of a clean run unless a VAR=VALUE replaces one; prints its
# lines, then "fail=N".
verdicts() {
	local dir=$1
	shift
	(
		tmp=$dir minutes=2 warm_rss=10000 max_rss=10400 end_rss=10200
		base_files=24 end_files=24 base_buffers=0 end_buffers=0
		base_heap=900 base_pool=100 end_heap=950 end_pool=120
		local kv
		for kv in "$@"; do
			declare "$kv"
		done
		soak_verdicts
		echo "fail=$fail"
	)
}

# expect NAME PATTERN OUT: the check NAME passes when OUT has fail=1 and a
# FAIL line matching PATTERN.
expect() {
	local out=$3
	grep -qx 'fail=1' <<<"$out" && grep -q "^soak: FAIL  $2" <<<"$out"
	lines_result $? "$1" "$(grep '^soak: FAIL' <<<"$out" | head -3)"
}

clean_run "$tmp/clean"
out=$(verdicts "$tmp/clean")
grep -qx 'fail=0' <<<"$out" && [ "$(grep -c '^soak: ok ' <<<"$out")" = 7 ] &&
	! grep -q '^soak: FAIL' <<<"$out"
lines_result $? "a clean run passes all seven verdicts" "$(grep '^soak: ' <<<"$out")"

# RSS: the limit is +10% over warm-up's peak; 10000 -> 11000 holds.
out=$(verdicts "$tmp/clean" max_rss=11000)
grep -qx 'fail=0' <<<"$out"
result $? "RSS at exactly +10% passes" "$(grep RSS <<<"$out")"
expect "RSS grown by 15% fails" "RSS grew from a peak of 10000 KiB" \
	"$(verdicts "$tmp/clean" max_rss=11500)"
expect "an open file not given back fails" "open files 25, baseline 24" \
	"$(verdicts "$tmp/clean" end_files=25)"
expect "I/O buffers not given back fail" "I/O buffers in use 3, baseline 0" \
	"$(verdicts "$tmp/clean" end_buffers=3)"

clean_run "$tmp/mism"
printf 'randrw 4k ... 3 verify mismatches\n' >"$tmp/mism/bench.1.out"
expect "a verify mismatch fails" "3 verify mismatches (1 runs)" "$(verdicts "$tmp/mism")"

clean_run "$tmp/norun"
rm "$tmp/norun/bench.1.json"
expect "no verified run at all fails" "0 verify mismatches (0 runs)" "$(verdicts "$tmp/norun")"

clean_run "$tmp/rc"
echo 1 >"$tmp/rc/bench.1.rc"
expect "a tcq-bench run that exited non-zero fails" "tcq-bench: 1 of 1 runs exited non-zero" \
	"$(verdicts "$tmp/rc")"
clean_run "$tmp/norc"
rm "$tmp/norc/bench.1.rc"
expect "a tcq-bench run without an exit status fails" "tcq-bench: 1 of 1 runs" \
	"$(verdicts "$tmp/norc")"

clean_run "$tmp/cold"
echo "at 10:00:00: tmf exited 1" >"$tmp/cold/cold.fail"
expect "a failed TARGET COLD RESET fails" "TARGET COLD RESET: 1 failed, 1 passed" \
	"$(verdicts "$tmp/cold")"
clean_run "$tmp/nocold"
: >"$tmp/nocold/cold.out"
expect "no TARGET COLD RESET at all fails" "TARGET COLD RESET: 0 failed, 0 passed" \
	"$(verdicts "$tmp/nocold")"

clean_run "$tmp/tmf"
echo "pass 3" >"$tmp/tmf/tmfload.fail"
printf 'pass 3, status 1, from 10:00:00.1 to 10:00:05.2\ntmfload: FAIL: ABORT TASK SET answered 5\n' \
	>"$tmp/tmf/tmfload.fail.3"
out=$(verdicts "$tmp/tmf")
expect "a failed tmfload pass fails, and is shown" "tmfload: 1 failed passes, 1 passed" "$out"
grep -q 'ABORT TASK SET answered 5' <<<"$out"
lines_result $? "the failed pass's own lines are in the verdict" "$(grep 'tmfload' <<<"$out" | head -3)"
clean_run "$tmp/notmf"
: >"$tmp/notmf/tmfload.out"
expect "no tmfload pass at all fails" "tmfload: 0 failed passes, 0 passed" "$(verdicts "$tmp/notmf")"

tap_end
