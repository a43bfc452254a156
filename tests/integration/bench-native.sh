#!/bin/bash
# tcq-bench's native engine against a live tcqd: a sweep with JSON output,
# --verify writes and reads with both digests on, ORDERED and HEAD OF QUEUE
# mixes, and order-check (which must find no violation on tcqd).
. "$(dirname "$0")/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
[ -x "$BENCH" ] || fail "tcq-bench not built at $BENCH"

start_tcqd
Q=(--quiet --runtime 0.3)

# 1. native sweep: 2 x 2 points, all with data moved and no errors.
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

# 2. --verify through the target with header and data digests (CRC32C):
# write 8 MiB once with mixed sizes, read it back block by block.
run "$BENCH" --header-digest --data-digest --rw write,read --verify \
	--span 8m --bs 4k,64k --depth 8 --ios 512 --runtime 30 --quiet \
	"$TCQD_URL" || fail "--verify with digests failed"
grep -q 'errors' <<<"$OUT" && fail "errors reported: $OUT"
ok "--verify passes with both digests on"

# 3. ordered and head-of-queue writes mixed in: served, no errors.
run "$BENCH" --rw randwrite --bs 4k --depth 16 --ordered 10 --hoq 5 \
	"${Q[@]}" "$TCQD_URL" || fail "ORDERED/HOQ mix failed"
ok "ORDERED and HEAD OF QUEUE mix served"

# 4. order-check: SAM-5 ordering holds on tcqd (exit 0, no violation).
run "$BENCH" order-check "$TCQD_URL" || fail "order-check found violations"
grep -Eqi 'violation' <<<"$OUT" || fail "order-check printed no verdict"
ok "order-check: no violations"
tcqd_alive
stop_tcqd
pass
