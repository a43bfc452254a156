#!/bin/bash
# Several gateways, one logical unit (implicit ALUA): three tcqd processes
# export one shared file under one target name and serial, each its own
# portal, relative port and target port group (1 active/optimized,
# 2 active/non-optimized, 3 standby). Checks that REPORT TARGET PORT
# GROUPS is the same from every gateway, INQUIRY says TPGS=01b, VPD page
# 83h differs only in the port and group, the standby port answers NOT
# READY, and runs iscsi-test-cu's MultipathIO and reservation suites with
# the two URLs on two different gateways.
#
# State kept per process (unit attentions, reservations) is not shared
# between gateways yet, so the tests in KNOWN_SPLIT fail here by design;
# they are listed, not hidden: any other failure fails this test, and a
# known one that starts to pass is reported.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/cu.sh
. "$top_srcdir/tests/integration/cu.sh"
# shellcheck source=tests/integration/gateways.sh
. "$top_srcdir/tests/integration/gateways.sh"

need_tool iscsi-test-cu
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$RAWCDB"

IQN=iqn.2026-11.org.tcq:alua
SERIAL=alua-shared-0001
GROUPS_ARGS=(--tpg 1:active-optimized:1 --tpg 2:active-non-optimized:2
	--tpg 3:standby:3)
DISK=$TEST_TMP/shared.img
make_lun "$DISK" 128M
: "${CONFORMANCE_TIMEOUT:=120}"

# start_gw N: gateway N in group N with relative port N.
start_gw() {
	gw_start "$1" --export "$DISK" --iqn "$IQN" --serial "$SERIAL" \
		--tpg-id "$1" --rel-port-id "$1" "${GROUPS_ARGS[@]}" --threads 2
}

# cdb N CDB[:ALLOC]...: rawcdb through gateway N into $OUT.
cdb() {
	local n=$1
	shift
	run "$RAWCDB" "${GW_URL[$n]}" "$@" || fail "rawcdb through gateway $n"
}

bad_group_configuration_refuses_to_start() {
	local rc=0
	"$TCQD" --export "$DISK" --listen 127.0.0.1:0 --tpg-id 4 \
		"${GROUPS_ARGS[@]}" >/dev/null 2>"$TEST_TMP/bad.err" || rc=$?
	[ "$rc" -eq 1 ] || fail "tpg-id outside the groups: status $rc, expected 1"
	grep -q 'tpg_id 4 is not among the tpg groups' "$TEST_TMP/bad.err" ||
		fail "no message for tpg-id 4: $(cat "$TEST_TMP/bad.err")"
	ok "a gateway whose group is not listed refuses to start"
}

# Read-ahead (prefetch) buffers in one gateway cannot see another's
# writes: with several port groups prefetch = on is refused, and auto
# reads nothing ahead, so a read after another gateway's write returns it.
shared_lun_prefetch_on_refused() {
	local rc=0 conf=$TEST_TMP/shared-on.conf
	printf '[global]\nlisten = 127.0.0.1:0\n\n[target %s]\ntpg_id = 1\nrel_port_id = 1\ntpg = 1:active-optimized:1\ntpg = 2:active-non-optimized:2\n\n[lun %s 0]\npath = %s\nprefetch = on\n' \
		"$IQN" "$IQN" "$DISK" >"$conf"
	"$TCQD" -c "$conf" >/dev/null 2>"$TEST_TMP/on.err" || rc=$?
	[ "$rc" -eq 1 ] || fail "prefetch = on with two port groups: status $rc, expected 1"
	grep -qF "[lun $IQN 0] prefetch = on: target '$IQN' has 2 port groups" \
		"$TEST_TMP/on.err" ||
		fail "no message naming the LUN: $(cat "$TEST_TMP/on.err")"
	ok "prefetch = on where other gateways write the LUN: refused, naming it"
}

shared_lun_reads_see_other_gateways_writes() {
	local n on pat=""
	need_tool jq
	for n in 1 2; do
		gw_start "$n" --export "$DISK" --iqn "$IQN" --serial "$SERIAL" \
			--tpg-id "$n" --rel-port-id "$n" "${GROUPS_ARGS[@]}" \
			--threads 1 --ctl "$TEST_TMP/gw$n.sock"
	done
	# Four sequential 8 KiB reads through gateway 2 would start a
	# read-ahead from LBA 64 (backend/prefetch.c: after 3 in a row).
	cdb 2 28000000000000001000:8192 28000000001000001000:8192 \
		28000000002000001000:8192 28000000003000001000:8192
	for ((n = 0; n < 512; n++)); do pat+=c3; done
	cdb 1 "2a000000004000000100=$pat"
	cdb 2 28000000004000000100:512
	[ "$OUT" = "GOOD $pat" ] ||
		fail "gateway 2 read LBA 64 as ${OUT:0:40}..., not gateway 1's write"
	run "$TCQCTL" --ctl "$TEST_TMP/gw2.sock" --json stats ||
		fail "tcqctl stats on gateway 2"
	on=$(jq -r '.luns[0].prefetch.on' <<<"$OUT")
	[ "$on" = false ] || fail "gateway 2's prefetch is on ($on) with two gateways"
	gw_stop 1 2
	ok "a read after another gateway's write returns that write; prefetch off"
}

# ---- three gateways: REPORT TARGET PORT GROUPS, INQUIRY, VPD 83h ------------
fixture_three() {
	local n
	for n in 1 2 3; do start_gw "$n"; done
	ok "gateways: ${GW_URL[1]} ${GW_URL[2]} ${GW_URL[3]}"
}
teardown_three() { gw_stop 1 2 3; ok "the three gateways exited 0"; }

RTPG=a30a00000000000004000000:1024
RTPG_EXT=a32a00000000000004000000:1024
INQ=120000006000:96
VPD83=120183010000:256
# Length format: 3 descriptors; PREF on the optimized group; each supports
# AO, AN, S and U (0x0f); one relative port each.
WANT_RTPG=00000024
WANT_RTPG+=800f00010000000100000001
WANT_RTPG+=010f00020000000100000002
WANT_RTPG+=020f00030000000100000003

three_rtpg_same_on_every_gateway() {
	local n
	for n in 1 2 3; do
		cdb "$n" "$RTPG" "$RTPG_EXT"
		mapfile -t res <<<"$OUT"
		[ "${res[0]}" = "GOOD $WANT_RTPG" ] ||
			fail "gateway $n RTPG: '${res[0]}', want 'GOOD $WANT_RTPG'"
		[ "${res[1]}" = "GOOD 0000002810000000${WANT_RTPG:8}" ] ||
			fail "gateway $n extended RTPG: '${res[1]}'"
	done
	ok "REPORT TARGET PORT GROUPS (both formats) is the same on every gateway"
}

three_inquiry_reports_implicit_alua() {
	local n inq
	for n in 1 2 3; do
		cdb "$n" "$INQ"
		inq=${OUT#GOOD }
		# TPGS is bits 5-4 of byte 5 (3PC, bit 3, is set too)
		[ $((0x${inq:10:2} & 0x30)) = $((0x10)) ] ||
			fail "gateway $n INQUIRY byte 5 ${inq:10:2}, want TPGS 01b (10h)"
	done
	ok "standard INQUIRY reports TPGS=01b (implicit ALUA)"
}

# VPD 83h: gateway N's page is gateway 1's with its target port name
# (",t,0x000N": the portal group tag follows the relative port), relative
# port and group put to N; the logical unit designators are the same.
three_vpd83_same_lu_other_port_and_group() {
	local n want
	declare -A vpd=()
	hexstr() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
	for n in 1 2 3; do
		cdb "$n" "$VPD83"
		vpd[$n]=${OUT#GOOD }
	done
	for n in 2 3; do
		want=${vpd[1]}
		want=${want/$(hexstr ",t,0x0001")/$(hexstr ",t,0x000$n")}
		want=${want/5194000400000001/519400040000000$n}
		want=${want/5195000400000001/519500040000000$n}
		[ "$want" != "${vpd[1]}" ] || fail "VPD 83h: port designators not found"
		[ "${vpd[$n]}" = "$want" ] ||
			fail "VPD 83h of gateway $n: ${vpd[$n]}, want $want"
	done
	[[ ${vpd[1]} == *"$(hexstr "$SERIAL")"* ]] ||
		fail "VPD 83h has no T10 designator with the serial"
	ok "VPD 83h: same logical unit, port and group designators differ"
}

# TEST UNIT READY, READ(10): NOT READY, LOGICAL UNIT NOT ACCESSIBLE,
# TARGET PORT IN STANDBY STATE; REPORT LUNS still works.
three_standby_port_answers_not_ready_04_0b() {
	cdb 3 000000000000 28000000000000000100:512 a00000000000000000100000:4096
	[ "$OUT" = "CHECK CONDITION key=0x2 asc=0x04 ascq=0x0b
CHECK CONDITION key=0x2 asc=0x04 ascq=0x0b
GOOD 00000008000000000000000000000000" ] ||
		fail "standby gateway answers: $OUT"
	ok "standby port answers NOT READY 04h/0Bh; REPORT LUNS works"
}

three_non_optimized_port_runs_commands() {
	cdb 2 000000000000 28000000000000000100:512
	[[ $OUT == "GOOD -"$'\n'"GOOD "* ]] || fail "non-optimized gateway: $OUT"
	ok "an active/non-optimized port runs commands"
}

# SET TARGET PORT GROUPS: implicit only.
three_set_target_port_groups_refused() {
	cdb 1 a40a00000000000000000000
	[ "$OUT" = "CHECK CONDITION key=0x5 asc=0x20 ascq=0x00" ] ||
		fail "SET TARGET PORT GROUPS: $OUT"
	ok "SET TARGET PORT GROUPS is refused (implicit ALUA only)"
}

# ---- iscsi-test-cu with one URL per gateway --------------------------------
# Fail by design while unit attentions and reservations live in each
# process (shared PR state comes with the RADOS-backed reservations):
KNOWN_SPLIT=(
	# a LUN reset's unit attention reaches the other gateway's nexus
	MultipathIO.Reset
	# a persistent reservation made through gateway 1 is enforced by 2
	ProutReserve.AccessEA ProutReserve.AccessWE ProutReserve.AccessEARO
	ProutReserve.AccessWERO ProutReserve.AccessEAAR ProutReserve.AccessWEAR
	# gateway 2 sees the all-registrants reservation made through 1
	ProutReserve.OwnershipEAAR ProutReserve.OwnershipWEAR
	# gateway 2 sees the registration made through 1 and preempts it
	ProutPreempt.RemoveRegistration
	# RESERVE(6) made through gateway 1 conflicts on gateway 2
	Reserve6.2Initiators Reserve6.Logout Reserve6.ITNexusLoss
)

# cu_on_two CHECK: the run GW_CU_RUNS names over fresh gateways 1 and 2
# (what a failed test leaves behind on one of them must not decide the
# next run). Every test it names must pass, but those of KNOWN_SPLIT,
# which must have run and failed.
cu_on_two() {
	local spec=${GW_CU_RUNS[$1]} log t verdict k known bad=() now_pass=()
	local n_pass=0 n_known=0
	log=$TEST_TMP/cu-${spec%%[.,]*}.log
	start_gw 1
	start_gw 2
	gw_cu "$spec" "$log"
	while read -r t verdict; do
		known=0
		for k in "${KNOWN_SPLIT[@]}"; do [ "$k" = "$t" ] && known=1; done
		if [ "$verdict" = passed ]; then
			n_pass=$((n_pass + 1))
			[ "$known" -eq 1 ] && now_pass+=("$t")
		elif [ "$known" -eq 1 ] && [ "$verdict" = FAILED ]; then
			n_known=$((n_known + 1))
		else
			bad+=("$t:$verdict")
		fi
	done <<<"$RESULTS"
	[ "${#bad[@]}" -eq 0 ] || { cat "$log"; fail "$spec: ${bad[*]}"; }
	[ "${#now_pass[@]}" -eq 0 ] ||
		say "NOTE: now passing, take them off KNOWN_SPLIT: ${now_pass[*]}"
	ok "$spec: $n_pass passed, $n_known failed for want of state shared between gateways"
	gw_stop 1 2
}

CHECKS=(
	bad_group_configuration_refuses_to_start
	shared_lun_prefetch_on_refused
	shared_lun_reads_see_other_gateways_writes
	@three
	three_rtpg_same_on_every_gateway
	three_inquiry_reports_implicit_alua
	three_vpd83_same_lu_other_port_and_group
	three_standby_port_answers_not_ready_04_0b
	three_non_optimized_port_runs_commands
	three_set_target_port_groups_refused
	@
	"${GW_CU_CHECKS[@]/#/cu_on_two:}"
)
run_checks "$@"
