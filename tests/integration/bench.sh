#!/bin/bash
# tcq-bench against a live tcqd: the libiscsi engine and the local engine
# with tiny sweeps, --json/--csv output, --compare, --verify passing, and
# --verify catching a block corrupted behind the target's back.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$BENCH"
LUN=$TEST_TMP/lun0.img
Q=(--quiet --runtime 0.3)
SWEEP=(--engine libiscsi --rw randread --bs 4k,64k --depth 1,4 "${Q[@]}")

fixture_bench() { start_tcqd; }

# sweep ARGS...: the 2 x 2 libiscsi sweep.
sweep() {
	run "$BENCH" "${SWEEP[@]}" "$@" "$TCQD_URL" || fail "libiscsi sweep failed"
}

libiscsi_sweep_prints_table_and_csv() {
	sweep --csv "$TEST_TMP/a.csv"
	grep -q '^randread, 1 session: MB/s' <<<"$OUT" || fail "no table title"
	grep -Eq '^ *64K \|' <<<"$OUT" || fail "no 64K row"
	ok "the table has its title and a 64K row"
	[ "$(wc -l <"$TEST_TMP/a.csv")" -eq 5 ] || fail "CSV should have 4 points"
	ok "the CSV has a header and 4 points"
}

libiscsi_sweep_json_has_four_sane_points() {
	need_tool python3
	sweep --json "$TEST_TMP/b.json"
	python3 - "$TEST_TMP/b.json" <<'PY' || fail "JSON output malformed"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "tcq-bench" and d["engine"] == "libiscsi", d
pts = d["points"]
assert len(pts) == 4, pts
for p in pts:
    assert p["rw"] == "randread" and p["bs"] in (4096, 65536), p
    assert p["depth"] in (1, 4) and p["sessions"] == 1, p
    assert p["ios"] > 0 and p["iops"] > 0 and p["mbps"] > 0, p
    assert p["errors"] == 0, p
    assert 0 < p["lat_us"]["p50"] <= p["lat_us"]["p99"] <= p["lat_us"]["p999"], p
PY
	ok "JSON output parses and holds 4 sane points"
}

compare_annotates_every_cell() {
	sweep --json "$TEST_TMP/c.json"
	run "$BENCH" "${SWEEP[@]}" --metric iops --compare "$TEST_TMP/c.json" \
		"$TCQD_URL" || fail "--compare run failed"
	[ "$(grep -Ec '^ *(4K|64K) \|.*%\).*%\)' <<<"$OUT")" -eq 2 ] ||
		fail "--compare did not annotate every cell"
	ok "--compare annotates cells"
}

# stamp: writes the first 8 MiB exactly once (2048 sequential 4K writes)
# through the target, then reads it back checking every block.
stamp() {
	run "$BENCH" --engine libiscsi --rw write,read --verify --span 8m \
		--bs 4k --depth 4 --sessions 1 --ios 2048 --runtime 30 --quiet \
		"$TCQD_URL" || fail "--verify write+read through tcqd failed"
}

verify_passes_through_target() {
	stamp
	ok "--verify passes through the target"
}

# local ARGS...: the local engine on the backing file (a tmpfs TMPDIR has
# no O_DIRECT: then buffered).
local_engine() {
	local rc=0
	run "$BENCH" --engine local "$@" "$LUN" || rc=$?
	if [ "$rc" -ne 0 ] && grep -q O_DIRECT <<<"$OUT"; then
		rc=0
		run "$BENCH" --engine local --buffered "$@" "$LUN" || rc=$?
	fi
	return "$rc"
}

local_engine_reads_stamps_tcqd_wrote() {
	stamp
	local_engine --rw read,randread --bs 4k,16k --depth 1,8 --span 8m \
		--verify "${Q[@]}" || fail "local --verify read failed"
	ok "local engine reads back valid stamps"
}

# Corrupt LBA 100 behind everyone's back: --verify must name it.
local_verify_finds_corrupted_block() {
	local rc=0
	stamp
	printf 'garbage' | dd of="$LUN" bs=1 seek=$((100 * 512 + 200)) \
		conv=notrunc status=none || fail "dd failed"
	# All 2048 blocks of the span (not a timed run: on a busy machine a
	# short run might stop before LBA 100).
	local_engine --rw read --bs 4k --depth 4 --span 8m --verify --quiet \
		--ios 2048 --runtime 60 || rc=$?
	[ "$rc" -eq 1 ] || fail "corrupted block: expected exit 1, got $rc"
	grep -q 'verify: LBA 100: checksum mismatch' <<<"$OUT" ||
		fail "corrupted LBA 100 not reported"
	grep -q '^errors: read .*verify mismatches (first at LBA 100)' <<<"$OUT" ||
		fail "no errors footnote"
	ok "--verify finds the corrupted block"
}

usage_error_exits_2() {
	local rc=0
	run "$BENCH" --bs 3x "$LUN" || rc=$?
	[ "$rc" -eq 2 ] || fail "bad option: expected exit 2, got $rc"
	ok "a bad option exits 2"
}

CHECKS=(
	@bench
	libiscsi_sweep_prints_table_and_csv
	libiscsi_sweep_json_has_four_sane_points
	compare_annotates_every_cell
	verify_passes_through_target
	local_engine_reads_stamps_tcqd_wrote
	local_verify_finds_corrupted_block
	@
	usage_error_exits_2
)
run_checks "$@"
