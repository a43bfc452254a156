#!/bin/bash
# tcq-bench against a live tcqd: the libiscsi engine and the local engine
# with tiny sweeps, --json/--csv output, --compare, --verify passing, and
# --verify catching a block corrupted behind the target's back.
. "$(dirname "$0")/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
[ -x "$BENCH" ] || fail "tcq-bench not built at $BENCH"

start_tcqd
LUN=$TEST_TMP/lun0.img
Q=(--quiet --runtime 0.3)

# 1. libiscsi engine: a 2 x 2 sweep with JSON and CSV output.
run "$BENCH" --engine libiscsi --rw randread --bs 4k,64k --depth 1,4 \
	"${Q[@]}" --json "$TEST_TMP/a.json" --csv "$TEST_TMP/a.csv" \
	"$TCQD_URL" || fail "libiscsi sweep failed"
grep -q '^randread, 1 session: MB/s' <<<"$OUT" || fail "no table title"
grep -Eq '^ *64K \|' <<<"$OUT" || fail "no 64K row"
[ "$(wc -l <"$TEST_TMP/a.csv")" -eq 5 ] || fail "CSV should have 4 points"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$TEST_TMP/a.json" <<'PY' || fail "JSON output malformed"
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
fi

# 2. --compare against that file: every cell gets a difference.
run "$BENCH" --engine libiscsi --rw randread --bs 4k,64k --depth 1,4 \
	"${Q[@]}" --metric iops --compare "$TEST_TMP/a.json" "$TCQD_URL" ||
	fail "--compare run failed"
[ "$(grep -Ec '^ *(4K|64K) \|.*%\).*%\)' <<<"$OUT")" -eq 2 ] ||
	fail "--compare did not annotate every cell"
ok "--compare annotates cells"

# 3. --verify through the target: write the first 8 MiB exactly once
# (2048 sequential 4K writes), then read it back and check every block.
run "$BENCH" --engine libiscsi --rw write,read --verify --span 8m --bs 4k \
	--depth 4 --sessions 1 --ios 2048 --runtime 30 --quiet "$TCQD_URL" ||
	fail "--verify write+read through tcqd failed"
ok "--verify passes through the target"
tcqd_alive
stop_tcqd

# 4. local engine on the backing file: the stamps tcqd stored are intact.
LOPT=()
if ! run "$BENCH" --engine local --rw read,randread --bs 4k,16k --depth 1,8 \
	--span 8m --verify "${Q[@]}" "$LUN"; then
	grep -q O_DIRECT <<<"$OUT" || fail "local --verify read failed"
	LOPT=(--buffered)	# a tmpfs TMPDIR has no O_DIRECT
	run "$BENCH" --engine local "${LOPT[@]}" --rw read,randread \
		--bs 4k,16k --depth 1,8 --span 8m --verify "${Q[@]}" "$LUN" ||
		fail "local --verify read failed"
fi
ok "local engine reads back valid stamps"

# 5. corrupt LBA 100 behind everyone's back: --verify must name it.
printf 'garbage' | dd of="$LUN" bs=1 seek=$((100 * 512 + 200)) conv=notrunc \
	status=none || fail "dd failed"
rc=0
# Read all 2048 blocks of the span (not a timed run: on a busy machine a
# short run might stop before LBA 100).
run "$BENCH" --engine local "${LOPT[@]}" --rw read --bs 4k --depth 4 \
	--span 8m --verify --quiet --ios 2048 --runtime 60 "$LUN" || rc=$?
[ "$rc" -eq 1 ] || fail "corrupted block: expected exit 1, got $rc"
grep -q 'verify: LBA 100: checksum mismatch' <<<"$OUT" ||
	fail "corrupted LBA 100 not reported"
grep -q '^errors: read .*verify mismatches (first at LBA 100)' <<<"$OUT" ||
	fail "no errors footnote"
ok "--verify finds the corrupted block"

# 6. usage errors exit 2.
rc=0
run "$BENCH" --bs 3x "$LUN" || rc=$?
[ "$rc" -eq 2 ] || fail "bad option: expected exit 2, got $rc"
pass
