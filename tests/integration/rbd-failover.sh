#!/bin/bash
# Two gateways, one RBD image, one gateway killed mid-run: two tcqd
# processes export the same image (same IQN and serial, each its own
# portal and target port group, cache=none as several gateways need), and
# tcq-bench --verify runs randwrite then read on two sessions, one per
# gateway. Gateway 1 gets SIGKILL in the middle of the write phase. The
# session on gateway 2 must finish the point without an error, only the
# lost session's I/Os in flight may fail, and the read phase, through
# gateway 2 alone, must find every acknowledged write (a write that was in
# flight on gateway 1 may read back old or new, nothing else).
# Skips (77) when tcqd was built without librbd or Ceph is not installed.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ceph.sh
. "$top_srcdir/tests/integration/ceph.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
[ -x "$TCQD" ] || fail "tcqd not built at $TCQD"
[ -x "$BENCH" ] || fail "tcq-bench not built at $BENCH"

probe=$(CEPH_CONF=/nonexistent timeout 10 "$TCQD" --backend rbd:image=probe \
	--listen 127.0.0.1:0 2>&1 </dev/null)
grep -q 'built without librbd' <<<"$probe" &&
	skip "tcqd was built without librbd (install librbd-dev librados-dev, re-run configure)"
ceph_available ||
	skip "Ceph is not installed (scripts/install-deps installs ceph-mon ceph-osd ceph-mgr ceph-common)"

IQN=iqn.2026-11.org.tcq:rbdfo
SERIAL=rbd-failover-0001
DEPTH=8
SPAN=16m
BS=16k
# shellcheck source=tests/integration/gateways.sh
. "$top_srcdir/tests/integration/gateways.sh"

# start_gw N: gateway N on the image, in target port group N.
start_gw() {
	gw_start "$1" --backend rbd:pool=rbd,image=fo,timeout=20 \
		--iqn "$IQN" --serial "$SERIAL" --tpg-id "$1" --rel-port-id "$1" \
		--tpg 1:active-optimized:1 --tpg 2:active-non-optimized:2 \
		--threads 2
}

# shellcheck disable=SC2317  # called through the EXIT trap
fo_cleanup() {
	local rc=$? pid
	gw_kill_all
	for pid in $BENCH_PID; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	ceph_stop
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		for f in "${GW_LOG[1]:-}" "${GW_LOG[2]:-}" \
			"$TEST_TMP"/bench.err "$TEST_TMP"/bench.out; do
			[ -s "$f" ] && { echo "----- $f -----"; tail -n 30 "$f"; }
		done
	fi
	(exit "$rc")
	lib_cleanup
}
BENCH_PID=
trap fo_cleanup EXIT

t0=$SECONDS
ceph_start "$TEST_TMP/ceph" || fail "the Ceph cluster did not start"
ok "Ceph cluster started in $((SECONDS - t0)) s"
# Layering only: a killed gateway leaves no exclusive lock behind.
run timeout 60 rbd create --size 64M --image-feature layering rbd/fo ||
	fail "rbd create failed"
start_gw 1
start_gw 2
grep -q 'cache none' "${GW_LOG[1]}" ||
	fail "the gateways do not run with cache=none by default"
ok "two gateways: ${GW_URL[1]} ${GW_URL[2]}"

# randwrite for 6 s, then read for 3 s, one session per gateway.
t1=$SECONDS
"$BENCH" --rw randwrite,read --verify --bs "$BS" --depth "$DEPTH" \
	--sessions 2 --threads 2 --runtime 6 --span "$SPAN" --quiet \
	--json "$TEST_TMP/bench.json" "${GW_URL[1]}" "${GW_URL[2]}" \
	>"$TEST_TMP/bench.out" 2>"$TEST_TMP/bench.err" &
BENCH_PID=$!
sleep 3
kill -0 "$BENCH_PID" 2>/dev/null || fail "tcq-bench ended before the kill"
kill -KILL "${GW_PID[1]}"
wait "${GW_PID[1]}" 2>/dev/null
unset "GW_PID[1]"
ok "gateway 1 killed $((SECONDS - t1)) s into the run"
rc=0
wait "$BENCH_PID" || rc=$?
BENCH_PID=
cat "$TEST_TMP/bench.out"
cat "$TEST_TMP/bench.err"
# Exit 1: errors were counted (the lost session's); 2 would be a run
# that could not go on.
[ "$rc" -eq 1 ] || fail "tcq-bench exit $rc (expected 1: errors of the lost session only)"
grep -q 'session lost' "$TEST_TMP/bench.err" ||
	fail "tcq-bench did not see the session to gateway 1 die"
grep -q 'verify mismatches' "$TEST_TMP/bench.out" &&
	fail "an acknowledged write did not read back"
grep -q 'CHECK CONDITION\|other SCSI status' "$TEST_TMP/bench.out" &&
	fail "gateway 2 answered commands with an error"

# Per point from the JSON: the write point lost at most the depth of the
# dead session (+1 for the loss itself), the read point read the whole
# span at least once through gateway 2 (+1: gateway 1 left out).
python3 - "$TEST_TMP/bench.json" "$DEPTH" "$SPAN" "$BS" <<'EOF' ||
import json, sys
pts = json.load(open(sys.argv[1]))["points"]
depth = int(sys.argv[2])
def size(s):
    return int(s[:-1]) << {"k": 10, "m": 20}[s[-1]]
span, bs = size(sys.argv[3]), size(sys.argv[4])
w = [p for p in pts if p["rw"] == "randwrite"][0]
r = [p for p in pts if p["rw"] == "read"][0]
print("randwrite: %d I/Os, %d errors; read: %d I/Os, %d errors"
      % (w["ios"], w["errors"], r["ios"], r["errors"]))
ok = 1 <= w["errors"] <= depth + 1 and w["ios"] > 0
ok = ok and r["errors"] == 1 and r["ios"] * bs >= span
sys.exit(0 if ok else 1)
EOF
	fail "error counts or I/O counts out of bounds"
tail -n +1 "${GW_LOG[2]}" | grep -q 'ERROR' &&
	fail "gateway 2 logged errors"
kill -0 "${GW_PID[2]}" 2>/dev/null || fail "gateway 2 died"
ok "gateway 2 served on; every acknowledged write read back"
pass "rbd failover: one gateway killed mid-run, no acknowledged write lost, in $((SECONDS - t0)) s"
