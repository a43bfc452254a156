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

need_tool iscsi-test-cu
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
[ -x "$RAWCDB" ] || fail "rawcdb not built at $RAWCDB"

IQN=iqn.2026-11.org.tcq:alua
SERIAL=alua-shared-0001
GROUPS_ARGS=(--tpg 1:active-optimized:1 --tpg 2:active-non-optimized:2
	--tpg 3:standby:3)
DISK=$TEST_TMP/shared.img
make_lun "$DISK" 128M

# shellcheck source=tests/integration/gateways.sh
. "$top_srcdir/tests/integration/gateways.sh"

# start_gw N: gateway N in group N with relative port N.
start_gw() {
	gw_start "$1" --export "$DISK" --iqn "$IQN" --serial "$SERIAL" \
		--tpg-id "$1" --rel-port-id "$1" "${GROUPS_ARGS[@]}" --threads 2
}

alua_cleanup() {
	local rc=$?
	gw_kill_all
	(exit "$rc")
	lib_cleanup
}
trap alua_cleanup EXIT

# cdb N CDB[:ALLOC]...: rawcdb through gateway N into $OUT.
cdb() {
	local n=$1
	shift
	run "$RAWCDB" "${GW_URL[$n]}" "$@" || fail "rawcdb through gateway $n"
}

# ---- a bad group configuration does not start ----------------------------
rc=0
"$TCQD" --export "$DISK" --listen 127.0.0.1:0 --tpg-id 4 \
	"${GROUPS_ARGS[@]}" >/dev/null 2>"$TEST_TMP/bad.err" || rc=$?
[ "$rc" -eq 1 ] || fail "tpg-id outside the groups: status $rc, expected 1"
grep -q 'tpg_id 4 is not among the tpg groups' "$TEST_TMP/bad.err" ||
	fail "no message for tpg-id 4: $(cat "$TEST_TMP/bad.err")"
ok "a gateway whose group is not listed refuses to start"

for n in 1 2 3; do start_gw "$n"; done
ok "gateways: ${GW_URL[1]} ${GW_URL[2]} ${GW_URL[3]}"

# ---- REPORT TARGET PORT GROUPS, INQUIRY, VPD 83h ---------------------------
RTPG=a30a00000000000004000000:1024
RTPG_EXT=a32a00000000000004000000:1024
INQ=120000006000:96
VPD83=120183010000:256
# Length format: 3 descriptors; PREF on the optimized group; each supports
# AO, AN, S and U (0x0f); one relative port each.
want_rtpg=00000024
want_rtpg+=800f00010000000100000001
want_rtpg+=010f00020000000100000002
want_rtpg+=020f00030000000100000003
declare -A vpd=()
for n in 1 2 3; do
	cdb "$n" "$RTPG" "$RTPG_EXT" "$INQ" "$VPD83"
	mapfile -t res <<<"$OUT"
	[ "${res[0]}" = "GOOD $want_rtpg" ] ||
		fail "gateway $n RTPG: '${res[0]}', want 'GOOD $want_rtpg'"
	[ "${res[1]}" = "GOOD 0000002810000000${want_rtpg:8}" ] ||
		fail "gateway $n extended RTPG: '${res[1]}'"
	inq=${res[2]#GOOD }
	[ "${inq:10:2}" = 10 ] || fail "gateway $n INQUIRY byte 5 ${inq:10:2}, want 10 (TPGS 01b)"
	vpd[$n]=${res[3]#GOOD }
done
ok "REPORT TARGET PORT GROUPS (both formats) is the same on every gateway"
ok "standard INQUIRY reports TPGS=01b (implicit ALUA)"

# VPD 83h: gateway N's page is gateway 1's with its target port name
# (",t,0x000N": the portal group tag follows the relative port), relative
# port and group put to N; the logical unit designators are the same.
hexstr() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
for n in 2 3; do
	want=${vpd[1]}
	want=${want/$(hexstr ",t,0x0001")/$(hexstr ",t,0x000$n")}
	want=${want/5194000400000001/519400040000000$n}
	want=${want/5195000400000001/519500040000000$n}
	[ "$want" != "${vpd[1]}" ] || fail "VPD 83h: port designators not found"
	[ "${vpd[$n]}" = "$want" ] ||
		fail "VPD 83h of gateway $n: ${vpd[$n]}, want $want"
done
naa=$(hexstr "$SERIAL")
[[ ${vpd[1]} == *"$naa"* ]] || fail "VPD 83h has no T10 designator with the serial"
ok "VPD 83h: same logical unit, port and group designators differ"

# ---- the standby port --------------------------------------------------
# TEST UNIT READY, READ(10): NOT READY, LOGICAL UNIT NOT ACCESSIBLE,
# TARGET PORT IN STANDBY STATE; REPORT LUNS still works.
cdb 3 000000000000 28000000000000000100:512 a00000000000000000100000:4096
[ "$OUT" = "CHECK CONDITION key=0x2 asc=0x04 ascq=0x0b
CHECK CONDITION key=0x2 asc=0x04 ascq=0x0b
GOOD 00000008000000000000000000000000" ] ||
	fail "standby gateway answers: $OUT"
cdb 2 000000000000 28000000000000000100:512
[[ $OUT == "GOOD -"$'\n'"GOOD "* ]] || fail "non-optimized gateway: $OUT"
ok "standby port answers NOT READY 04h/0Bh; active ports run commands"
# SET TARGET PORT GROUPS: implicit only.
cdb 1 a40a00000000000000000000
[ "$OUT" = "CHECK CONDITION key=0x5 asc=0x20 ascq=0x00" ] ||
	fail "SET TARGET PORT GROUPS: $OUT"
ok "SET TARGET PORT GROUPS is refused (implicit ALUA only)"
gw_stop 3

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
# One iscsi-test-cu run each (patterns for --test, SCSI. omitted). The
# Reserve6 reset tests each sleep 3 s and use one gateway only: left out.
# Suites that clean up after themselves share a run.
RUNS=(MultipathIO
	PrinReadKeys,PrinServiceactionRange,PrinReportCapabilities,ProutRegister,ProutClear
	ProutReserve ProutPreempt
	Reserve6.Simple,Reserve6.2Initiators,Reserve6.Logout,Reserve6.ITNexusLoss)
: "${CONFORMANCE_TIMEOUT:=120}"
unexpected=() now_pass=() n_pass=0 n_known=0
for spec in "${RUNS[@]}"; do
	# Fresh gateways per run: what a failed test leaves behind on one
	# of them must not decide the next run.
	[ -n "${GW_PID[1]:-}" ] && gw_stop 1 2
	for n in 1 2; do start_gw "$n"; done
	log=$TEST_TMP/cu-${spec%%[.,]*}.log
	gw_cu "$spec" "$log"
	results=$RESULTS
	while read -r t verdict; do
		known=0
		for k in "${KNOWN_SPLIT[@]}"; do [ "$k" = "$t" ] && known=1; done
		if [ "$verdict" = passed ]; then
			n_pass=$((n_pass + 1))
			[ "$known" -eq 1 ] && now_pass+=("$t")
		elif [ "$known" -eq 1 ]; then
			n_known=$((n_known + 1))
		else
			unexpected+=("$t")
			cat "$log"
		fi
	done <<<"$results"
	say "$spec: $(grep -c ' passed$' <<<"$results") passed, $(grep -c ' FAILED$' <<<"$results") failed"
done
gw_stop 1 2

say "two-gateway conformance: $n_pass passed, $n_known failed for want of state shared between gateways"
say "  (${KNOWN_SPLIT[*]})"
[ "${#now_pass[@]}" -eq 0 ] ||
	say "NOTE: now passing, take them off KNOWN_SPLIT: ${now_pass[*]}"
[ "${#unexpected[@]}" -eq 0 ] || fail "unexpected failures: ${unexpected[*]}"
pass "all checks passed"
