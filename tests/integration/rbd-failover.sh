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
# Skips when tcqd was built without librbd or Ceph is not installed (a
# failure under scripts/check and CI).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/ceph.sh
. "$top_srcdir/tests/integration/ceph.sh"
# shellcheck source=tests/integration/gateways.sh
. "$top_srcdir/tests/integration/gateways.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$TCQD" "$BENCH"

ceph_need
need_tool python3

IQN=iqn.2026-11.org.tcq:rbdfo
SERIAL=rbd-failover-0001
DEPTH=8
SPAN=16m
BS=16k

# start_gw N: gateway N on the image, in target port group N.
start_gw() {
	gw_start "$1" --backend rbd:pool=rbd,image=fo,timeout=20 \
		--iqn "$IQN" --serial "$SERIAL" --tpg-id "$1" --rel-port-id "$1" \
		--tpg 1:active-optimized:1 --tpg 2:active-non-optimized:2 \
		--threads 2
}

# shellcheck disable=SC2317  # called through the EXIT trap
fo_cleanup() {
	local rc=$?
	gw_kill_all
	ceph_stop
	(exit "$rc")
	lib_cleanup
}
trap fo_cleanup EXIT

if ! listing "$@"; then
	t0=$SECONDS
	ceph_start "$TEST_TMP/ceph" || fail "the Ceph cluster did not start"
	say "Ceph cluster started in $((SECONDS - t0)) s"
	# Layering only: a killed gateway leaves no exclusive lock behind.
	run timeout 60 rbd create --size 64M --image-feature layering rbd/fo ||
		fail "rbd create failed"
fi

# The experiment, once: randwrite for 6 s, then read for 3 s, one
# session per gateway; gateway 1 gets SIGKILL 3 s in. Its outcome is in
# BENCH_RC, bench.out, bench.err and bench.json.
fixture_failover() {
	local pid t1
	start_gw 1
	start_gw 2
	grep -q 'cache none' "${GW_LOG[1]}" ||
		fail "the gateways do not run with cache=none by default"
	t1=$SECONDS
	"$BENCH" --rw randwrite,read --verify --bs "$BS" --depth "$DEPTH" \
		--sessions 2 --threads 2 --runtime 6 --span "$SPAN" --quiet \
		--json "$TEST_TMP/bench.json" "${GW_URL[1]}" "${GW_URL[2]}" \
		>"$TEST_TMP/bench.out" 2>"$TEST_TMP/bench.err" &
	pid=$!
	sleep 3
	kill -0 "$pid" 2>/dev/null || fail "tcq-bench ended before the kill"
	# SIGKILL on purpose: the gateway failure this scenario simulates;
	# gateway 2 is stopped with SIGTERM (gw_stop / gw_kill_all).
	kill -KILL "${GW_PID[1]}"
	wait "${GW_PID[1]}" 2>/dev/null
	unset "GW_PID[1]"
	say "gateway 1 killed $((SECONDS - t1)) s into the run"
	BENCH_RC=0
	wait "$pid" || BENCH_RC=$?
	cat "$TEST_TMP/bench.out" "$TEST_TMP/bench.err"
}
teardown_failover() { gw_stop 2; ok "gateway 2 exited 0"; }

# Exit 1: errors were counted (the lost session's); 2 would be a run
# that could not go on.
failover_bench_ends_with_errors_of_lost_session() {
	[ "$BENCH_RC" -eq 1 ] ||
		fail "tcq-bench exit $BENCH_RC (expected 1: errors of the lost session only)"
	ok "tcq-bench exit 1: errors were counted"
	grep -q 'session lost' "$TEST_TMP/bench.err" ||
		fail "tcq-bench did not see the session to gateway 1 die"
	ok "tcq-bench saw the session to gateway 1 die"
}

failover_every_acknowledged_write_reads_back() {
	grep -q '^read' "$TEST_TMP/bench.out" || fail "no read phase in the output"
	grep -q 'verify mismatches' "$TEST_TMP/bench.out" &&
		fail "an acknowledged write did not read back"
	ok "the read phase found every acknowledged write"
}

failover_gateway2_answers_no_error() {
	grep -q 'CHECK CONDITION\|other SCSI status' "$TEST_TMP/bench.out" &&
		fail "gateway 2 answered commands with an error"
	grep -q 'ERROR' "${GW_LOG[2]}" && fail "gateway 2 logged errors"
	kill -0 "${GW_PID[2]}" 2>/dev/null || fail "gateway 2 died"
	ok "gateway 2 served on, without an error"
}

# Per point from the JSON: the write point lost at most the depth of the
# dead session (+1 for the loss itself), the read point read the whole
# span at least once through gateway 2 (+1: gateway 1 left out).
failover_error_and_io_counts_within_bounds() {
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
	ok "the write point lost at most one session's depth; the read point read the whole span"
}

CHECKS=(
	@failover
	failover_bench_ends_with_errors_of_lost_session
	failover_every_acknowledged_write_reads_back
	failover_gateway2_answers_no_error
	failover_error_and_io_counts_within_bounds
)
run_checks "$@"
