#!/bin/bash
# tcq-bench's native engine against a live tcqd: a sweep with JSON output,
# --verify writes and reads with both digests on, ORDERED and HEAD OF QUEUE
# mixes, and order-check (which must find no violation on tcqd).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$BENCH"
Q=(--quiet --runtime 0.3)

fixture_native() { start_tcqd; }

native_sweep_four_points_without_errors() {
	need_tool python3
	run "$BENCH" --rw randread --bs 4k,128k --depth 1,8 "${Q[@]}" \
		--json "$TEST_TMP/n.json" "$TCQD_URL" || fail "native sweep failed"
	python3 - "$TEST_TMP/n.json" <<'PY' || fail "native JSON output wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["engine"] == "native", d["engine"]
assert len(d["points"]) == 4, d["points"]
for p in d["points"]:
    assert p["ios"] > 0 and p["errors"] == 0, p
PY
	ok "native sweep: 4 points, no errors"
}

# Header and data digests (CRC32C): 8 MiB written once with mixed sizes,
# read back block by block.
native_verify_with_both_digests() {
	run "$BENCH" --header-digest --data-digest --rw write,read --verify \
		--span 8m --bs 4k,64k --depth 8 --ios 512 --runtime 30 --quiet \
		"$TCQD_URL" || fail "--verify with digests failed"
	grep -q 'errors' <<<"$OUT" && fail "errors reported: $OUT"
	ok "--verify passes with both digests on, no errors"
}

native_ordered_and_head_of_queue_mix_served() {
	run "$BENCH" --rw randwrite --bs 4k --depth 16 --ordered 10 --hoq 5 \
		"${Q[@]}" "$TCQD_URL" || fail "ORDERED/HOQ mix failed"
	ok "ORDERED and HEAD OF QUEUE mix served"
}

native_order_check_finds_no_violation() {
	run "$BENCH" order-check "$TCQD_URL" || fail "order-check found violations"
	grep -q '^order-check: 0 violations' <<<"$OUT" ||
		fail "order-check did not report 0 violations"
	ok "order-check: 0 violations"
}

CHECKS=(
	@native
	native_sweep_four_points_without_errors
	native_verify_with_both_digests
	native_ordered_and_head_of_queue_mix_served
	native_order_check_finds_no_violation
)
run_checks "$@"
