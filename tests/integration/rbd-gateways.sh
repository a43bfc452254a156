#!/bin/bash
# Several gateways, one rbd image, reservations shared through RADOS: two
# tcqd processes export one image (created with layering only) under one
# target name and serial, each its own portal, port and group, as in
# alua.sh. iscsi-test-cu's reservation suites and MultipathIO run with
# the two URLs on the two gateways with 0 failures (alua.sh's KNOWN_SPLIT
# included: over a file they fail for want of shared state). Then a
# registration and reservation made through gateway 1 survive its
# restart and show through both gateways, and a PREEMPT through gateway 2
# gives the preempted nexus on gateway 1 REGISTRATIONS PREEMPTED.
# Skips (77) when tcqd was built without librbd or Ceph is not installed.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ceph.sh
. "$top_srcdir/tests/integration/ceph.sh"

PRGW=${PRGW:-$top_builddir/tests/integration/prgw}
[ -x "$TCQD" ] || fail "tcqd not built at $TCQD"
[ -x "$PRGW" ] || fail "prgw not built at $PRGW"

probe=$(CEPH_CONF=/nonexistent timeout 10 "$TCQD" --backend rbd:image=probe \
	--listen 127.0.0.1:0 2>&1 </dev/null)
grep -q 'built without librbd' <<<"$probe" &&
	skip "tcqd was built without librbd (install librbd-dev librados-dev, re-run configure)"
ceph_available ||
	skip "Ceph is not installed (scripts/install-deps installs ceph-mon ceph-osd ceph-mgr ceph-common)"
need_tool iscsi-test-cu

IQN=iqn.2026-11.org.tcq:rbdgw
SERIAL=rbdgw-0001
GROUPS_ARGS=(--tpg 1:active-optimized:1 --tpg 2:active-non-optimized:2)
PA=iqn.2026-11.org.tcq:gw-initiator-a
PB=iqn.2026-11.org.tcq:gw-initiator-b
# shellcheck source=tests/integration/gateways.sh
. "$top_srcdir/tests/integration/gateways.sh"

# start_gw N: gateway N in group N with relative port N, on the image,
# with its reservations in RADOS.
start_gw() {
	gw_start "$1" --backend rbd:pool=rbd,image=disk,timeout=20 \
		--iqn "$IQN" --serial "$SERIAL" --tpg-id "$1" \
		--rel-port-id "$1" "${GROUPS_ARGS[@]}" --threads 2
	grep -q 'shared reservations' "${GW_LOG[$1]}" ||
		{ cat "${GW_LOG[$1]}"; fail "gateway $1: no shared reservation state"; }
}

# Gateways first (they talk to the cluster), then the cluster.
# shellcheck disable=SC2317  # called through the EXIT trap
gw_cleanup() {
	local rc=$? pid
	gw_kill_all
	for pid in ${BG_PID:-}; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	ceph_stop
	(exit "$rc")
	lib_cleanup
}
trap gw_cleanup EXIT

# pr N INITIATOR CMD...: prgw through gateway N into $OUT.
pr() {
	local n=$1
	shift
	run timeout 30 "$PRGW" "${GW_URL[$n]}" "$@" ||
		fail "prgw through gateway $n: $OUT"
}

t0=$SECONDS
ceph_start "$TEST_TMP/ceph" || fail "the Ceph cluster did not start"
ok "Ceph cluster started in $((SECONDS - t0)) s"
run timeout 60 rbd create --size 64M --image-feature layering rbd/disk ||
	fail "rbd create failed"
for n in 1 2; do start_gw "$n"; done
ok "gateways: ${GW_URL[1]} ${GW_URL[2]}"

# ---- iscsi-test-cu with one URL per gateway --------------------------------
# The Reserve6 reset tests each sleep 3 s and use one gateway only.
RUNS=(MultipathIO
	PrinReadKeys,PrinServiceactionRange,PrinReportCapabilities,ProutRegister,ProutClear
	ProutReserve ProutPreempt
	Reserve6.Simple,Reserve6.2Initiators,Reserve6.Logout,Reserve6.ITNexusLoss)
# alua.sh's KNOWN_SPLIT: each must have run and passed here.
MUST_PASS=(MultipathIO.Reset
	ProutReserve.AccessEA ProutReserve.AccessWE ProutReserve.AccessEARO
	ProutReserve.AccessWERO ProutReserve.AccessEAAR ProutReserve.AccessWEAR
	ProutReserve.OwnershipEAAR ProutReserve.OwnershipWEAR
	ProutPreempt.RemoveRegistration
	Reserve6.2Initiators Reserve6.Logout Reserve6.ITNexusLoss)
: "${CONFORMANCE_TIMEOUT:=120}"
failed=() all_results=
for spec in "${RUNS[@]}"; do
	log=$TEST_TMP/cu-${spec%%[.,]*}.log
	t1=$SECONDS
	gw_cu "$spec" "$log"
	results=$RESULTS
	if grep -q ' FAILED$' <<<"$results"; then
		cat "$log"
		failed+=($(awk '$2 == "FAILED" { print $1 }' <<<"$results"))
	fi
	all_results+=$results$'\n'
	say "$spec: $(grep -c ' passed$' <<<"$results") passed, $(grep -c ' FAILED$' <<<"$results") failed ($((SECONDS - t1)) s)"
done
[ "${#failed[@]}" -eq 0 ] || fail "failures with the paths on two gateways: ${failed[*]}"
for t in "${MUST_PASS[@]}"; do
	grep -qx "$t passed" <<<"$all_results" || fail "$t did not run and pass"
done
ok "reservation suites and MultipathIO across two gateways: 0 failures (alua.sh's ${#MUST_PASS[@]} split tests pass)"

# ---- a gateway restart loses nothing ---------------------------------------
pr 1 "$PA" register 0xa1 reserve 0xa1 1 resv
[ "$OUT" = $'GOOD\nGOOD\nRESV a1 1' ] || fail "register and reserve through gateway 1: $OUT"
gw_stop 1
start_gw 1
grep -q 'shared reservations: 1 registration, reserved' "${GW_LOG[1]}" ||
	fail "restarted gateway 1 did not load the state: $(cat "${GW_LOG[1]}")"
for n in 1 2; do
	pr "$n" "$PB" keys resv write
	[ "$OUT" = $'KEYS a1\nRESV a1 1\nCONFLICT' ] ||
		fail "after gateway 1's restart, through gateway $n: $OUT"
done
ok "a registration and reservation made through gateway 1 survive its restart, seen and enforced by both"

# ---- PREEMPT through gateway 2, the preempted nexus on gateway 1 ----------
: >"$TEST_TMP/bg.out"
"$PRGW" "${GW_URL[1]}" "$PA" tur waitfile "$TEST_TMP/preempted" tur tur \
	write >"$TEST_TMP/bg.out" 2>&1 &
BG_PID=$!
for ((i = 0; i < 100; i++)); do
	[ -s "$TEST_TMP/bg.out" ] && break
	sleep 0.1
done
[ "$(head -n1 "$TEST_TMP/bg.out")" = GOOD ] ||
	fail "initiator a through gateway 1: $(cat "$TEST_TMP/bg.out")"
pr 2 "$PB" register 0xb1 preempt 0xb1 0xa1 1 resv
[ "$OUT" = $'GOOD\nGOOD\nRESV b1 1' ] || fail "preempt through gateway 2: $OUT"
touch "$TEST_TMP/preempted"
wait "$BG_PID" || fail "initiator a's session on gateway 1 failed: $(cat "$TEST_TMP/bg.out")"
BG_PID=
# REGISTRATIONS PREEMPTED (6/2A/05) once, then GOOD; a's write now
# conflicts with b's Write Exclusive reservation.
want=$'GOOD\nCHECK CONDITION key=0x6 asc=0x2a ascq=0x05\nGOOD\nCONFLICT'
[ "$(cat "$TEST_TMP/bg.out")" = "$want" ] ||
	fail "initiator a through gateway 1 after the preempt: $(cat "$TEST_TMP/bg.out")"
ok "PREEMPT through gateway 2: the preempted nexus on gateway 1 gets REGISTRATIONS PREEMPTED"
pr 1 "$PB" clear 0xb1 resv
[ "$OUT" = $'GOOD\nRESV none' ] || fail "CLEAR through gateway 1: $OUT"
gw_stop 1 2
say "total $((SECONDS - t0)) s, cluster start included"
pass "all checks passed"
