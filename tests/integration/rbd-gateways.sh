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
# Skips when tcqd was built without librbd or Ceph is not installed (a
# failure under scripts/check and CI).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/ceph.sh
. "$top_srcdir/tests/integration/ceph.sh"
# shellcheck source=tests/integration/cu.sh
. "$top_srcdir/tests/integration/cu.sh"
# shellcheck source=tests/integration/gateways.sh
. "$top_srcdir/tests/integration/gateways.sh"

PRGW=${PRGW:-$top_builddir/tests/integration/prgw}
need_built "$TCQD" "$PRGW"

ceph_need
need_tool iscsi-test-cu

IQN=iqn.2026-11.org.tcq:rbdgw
SERIAL=rbdgw-0001
GROUPS_ARGS=(--tpg 1:active-optimized:1 --tpg 2:active-non-optimized:2)
PA=iqn.2026-11.org.tcq:gw-initiator-a
PB=iqn.2026-11.org.tcq:gw-initiator-b
: "${CONFORMANCE_TIMEOUT:=120}"

# start_gw N: gateway N in group N with relative port N, on the image,
# with its reservations in RADOS.
start_gw() {
	gw_start "$1" --backend rbd:pool=rbd,image=disk,timeout=20 \
		--iqn "$IQN" --serial "$SERIAL" --tpg-id "$1" \
		--rel-port-id "$1" "${GROUPS_ARGS[@]}" --threads 2
	grep -q 'shared reservations' "${GW_LOG[$1]}" ||
		{ cat "${GW_LOG[$1]}"; fail "gateway $1: no shared reservation state"; }
}

# The cluster last (the gateways talk to it).
# shellcheck disable=SC2317  # called through the EXIT trap
gw_cleanup() {
	local rc=$?
	gw_kill_all
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

if ! listing "$@"; then
	t0=$SECONDS
	ceph_start "$TEST_TMP/ceph" || fail "the Ceph cluster did not start"
	say "Ceph cluster started in $((SECONDS - t0)) s"
	run timeout 60 rbd create --size 64M --image-feature layering rbd/disk ||
		fail "rbd create failed"
fi

fixture_gateways() {
	start_gw 1
	start_gw 2
	ok "gateways: ${GW_URL[1]} ${GW_URL[2]}"
}
teardown_gateways() { gw_stop 1 2; ok "both gateways exited 0"; }

# ---- iscsi-test-cu with one URL per gateway --------------------------------
# alua.sh's KNOWN_SPLIT: over a file they fail for want of shared state;
# here each must have run and passed.
MUST_PASS=(MultipathIO.Reset
	ProutReserve.AccessEA ProutReserve.AccessWE ProutReserve.AccessEARO
	ProutReserve.AccessWERO ProutReserve.AccessEAAR ProutReserve.AccessWEAR
	ProutReserve.OwnershipEAAR ProutReserve.OwnershipWEAR
	ProutPreempt.RemoveRegistration
	Reserve6.2Initiators Reserve6.Logout Reserve6.ITNexusLoss)

# cu_on_gateways CHECK: every test of the run GW_CU_RUNS names ran and
# passed.
cu_on_gateways() {
	local spec=${GW_CU_RUNS[$1]} log t verdict bad=() n=0 m
	log=$TEST_TMP/cu-${spec%%[.,]*}.log
	gw_cu "$spec" "$log"
	while read -r t verdict; do
		n=$((n + 1))
		[ "$verdict" = passed ] || bad+=("$t:$verdict")
	done <<<"$RESULTS"
	[ "${#bad[@]}" -eq 0 ] || { cat "$log"; fail "with the paths on two gateways: ${bad[*]}"; }
	for m in "${MUST_PASS[@]}"; do
		grep -qx "${spec%%[.,]*}\..*" <<<"$m" || continue
		grep -qx "$m passed" <<<"$RESULTS" || fail "$m did not run and pass"
	done
	ok "$spec: all $n tests passed across two gateways"
}

# ---- a gateway restart loses nothing ---------------------------------------
# (These start and stop their own gateways.)

# a_reserves: gateways 1 and 2 up, and a registered (key a1) holding a
# Write Exclusive reservation made through gateway 1 (it may be there).
a_reserves() {
	start_gw 1
	start_gw 2
	pr 1 "$PA" register 0xa1 reserve 0xa1 1 resv
	[ "$OUT" = $'GOOD\nGOOD\nRESV a1 1' ] ||
		fail "a registers and reserves through gateway 1: $OUT"
	ok "a holds a Write Exclusive reservation, made through gateway 1"
}

gateways_reservation_survives_gateway_restart() {
	local n
	a_reserves
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
	gw_stop 1 2
}

# ---- PREEMPT through gateway 2, the preempted nexus on gateway 1 ----------
gateways_preempt_reaches_nexus_on_other_gateway() {
	local want
	a_reserves
	: >"$TEST_TMP/bg.out"
	"$PRGW" "${GW_URL[1]}" "$PA" tur waitfile "$TEST_TMP/preempted" tur tur \
		write >"$TEST_TMP/bg.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 100 test -s "$TEST_TMP/bg.out"
	[ "$(head -n1 "$TEST_TMP/bg.out")" = GOOD ] ||
		fail "initiator a through gateway 1: $(cat "$TEST_TMP/bg.out")"
	pr 2 "$PB" register 0xb1 preempt 0xb1 0xa1 1 resv
	[ "$OUT" = $'GOOD\nGOOD\nRESV b1 1' ] || fail "preempt through gateway 2: $OUT"
	touch "$TEST_TMP/preempted"
	wait "${BG_PIDS[-1]}" ||
		fail "initiator a's session on gateway 1 failed: $(cat "$TEST_TMP/bg.out")"
	unset 'BG_PIDS[-1]'
	# REGISTRATIONS PREEMPTED (6/2A/05) once, then GOOD; a's write now
	# conflicts with b's Write Exclusive reservation.
	want=$'GOOD\nCHECK CONDITION key=0x6 asc=0x2a ascq=0x05\nGOOD\nCONFLICT'
	[ "$(cat "$TEST_TMP/bg.out")" = "$want" ] ||
		fail "initiator a through gateway 1 after the preempt: $(cat "$TEST_TMP/bg.out")"
	ok "PREEMPT through gateway 2: the preempted nexus on gateway 1 gets REGISTRATIONS PREEMPTED"
	pr 1 "$PB" clear 0xb1 resv
	[ "$OUT" = $'GOOD\nRESV none' ] || fail "CLEAR through gateway 1: $OUT"
	ok "CLEAR through gateway 1 ends it"
	gw_stop 1 2
}

gateways_lun_reset_reaches_nexus_on_other_gateway() {
	local out
	start_gw 1
	start_gw 2
	: >"$TEST_TMP/bg.out"
	rm -f "$TEST_TMP/reset"
	# two TEST UNIT READY take whatever unit attention a's nexus had
	"$PRGW" "${GW_URL[1]}" "$PA" tur tur waitfile "$TEST_TMP/reset" tur tur \
		>"$TEST_TMP/bg.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 100 test "$(wc -l <"$TEST_TMP/bg.out")" -ge 2
	pr 2 "$PB" lunreset
	[ "$OUT" = GOOD ] || fail "LOGICAL UNIT RESET through gateway 2: $OUT"
	touch "$TEST_TMP/reset"
	wait "${BG_PIDS[-1]}" ||
		fail "initiator a's session on gateway 1 failed: $(cat "$TEST_TMP/bg.out")"
	unset 'BG_PIDS[-1]'
	# SAM-5: a logical unit reset gives every nexus BUS DEVICE RESET
	# FUNCTION OCCURRED (6/29/03), once
	out=$(tail -n 2 "$TEST_TMP/bg.out")
	[ "$out" = $'CHECK CONDITION key=0x6 asc=0x29 ascq=0x03\nGOOD' ] ||
		fail "initiator a through gateway 1 after the reset through gateway 2: $(cat "$TEST_TMP/bg.out")"
	ok "LUN RESET through gateway 2: the nexus on gateway 1 gets BUS DEVICE RESET FUNCTION OCCURRED once"
	gw_stop 1 2
}

CHECKS=(
	@gateways
	"${GW_CU_CHECKS[@]/#/cu_on_gateways:}"
	@
	gateways_reservation_survives_gateway_restart
	gateways_preempt_reaches_nexus_on_other_gateway
	gateways_lun_reset_reaches_nexus_on_other_gateway
)
run_checks "$@"
