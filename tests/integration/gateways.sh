# shellcheck shell=bash
# Several tcqd gateways of one logical unit, for alua.sh, rbd-gateways.sh
# and rbd-failover.sh (source lib.sh first). Gateways are numbered; each
# gets its own portal on 127.0.0.1:0.
#
#   gw_start N ARGS...   tcqd ARGS... as gateway N; waits (20 s at most)
#                        for its URL; sets GW_PID[N], GW_URL[N], GW_LOG[N]
#   gw_stop N...         SIGTERM to each, and a clean exit within 10 s
#                        with no sanitizer report in its log
#   gw_kill_all          SIGTERM, then SIGKILL after 10 s, to every
#                        gateway still running (cleanup; tcqd_end)
#   gw_cu SPEC LOG       iscsi-test-cu over gateways 1 and 2 (below; source
#                        cu.sh too)

declare -A GW_PID=() GW_URL=() GW_LOG=() GW_OWNER=()
GW_STARTS=0

# A check or fixture (checks.sh) that ends stops the gateways it started
# itself: those its shell ($BASHPID) owns.
exit_hook() {
	local n
	for n in "${!GW_PID[@]}"; do
		[ "${GW_OWNER[$n]:-}" = "$BASHPID" ] || continue
		tcqd_end "${GW_PID[$n]}"
		unset "GW_PID[$n]"
	done
}

gw_start() {
	local n=$1 out log line i
	shift
	GW_STARTS=$((GW_STARTS + 1))
	out=$TEST_TMP/tcqd.gw$n-$GW_STARTS.out
	log=$TEST_TMP/tcqd.gw$n-$GW_STARTS.log
	: >"$out"
	"$TCQD" "$@" --listen 127.0.0.1:0 >"$out" 2>"$log" &
	GW_PID[$n]=$!
	GW_OWNER[$n]=$BASHPID
	GW_LOG[$n]=$log
	line=
	for ((i = 0; i < 200; i++)); do
		line=$(grep -m1 '^iscsi://' "$out" || true)
		[ -n "$line" ] && break
		kill -0 "${GW_PID[$n]}" 2>/dev/null ||
			{ cat "$log"; fail "gateway $n exited before printing its URL"; }
		sleep 0.1
	done
	[ -n "$line" ] || fail "gateway $n printed no URL within 20 s"
	GW_URL[$n]=$line
}

gw_stop() {
	local n pid rc i
	for n in "$@"; do
		kill -TERM "${GW_PID[$n]}" 2>/dev/null ||
			fail "gateway $n died on its own"
	done
	for n in "$@"; do
		pid=${GW_PID[$n]} rc=0
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && {
			kill -KILL "$pid"
			fail "gateway $n did not exit on SIGTERM"
		}
		wait "$pid" || rc=$?
		unset "GW_PID[$n]"
		[ "$rc" -eq 0 ] || fail "gateway $n exited with status $rc"
		rc=$(san_reports_in "${GW_LOG[$n]}")
		[ -z "$rc" ] || fail "gateway $n: sanitizer report: $rc"
	done
}

gw_kill_all() {
	local pid
	for pid in "${GW_PID[@]}"; do
		tcqd_end "$pid"
	done
	GW_PID=()
}

# The iscsi-test-cu runs over two gateways (alua.sh, rbd-gateways.sh),
# check name -> the tests of the run (SCSI. omitted), in GW_CU_CHECKS'
# order. Suites that clean up after themselves share a run; the Reserve6
# reset tests each sleep 3 s and use one gateway only: left out.
GW_CU_CHECKS=(cu_multipathio cu_pr_in_register_and_clear cu_prout_reserve
	cu_prout_preempt cu_reserve6)
declare -A GW_CU_RUNS=(
	[cu_multipathio]=MultipathIO
	[cu_pr_in_register_and_clear]=PrinReadKeys,PrinServiceactionRange,PrinReportCapabilities,ProutRegister,ProutClear
	[cu_prout_reserve]=ProutReserve
	[cu_prout_preempt]=ProutPreempt
	[cu_reserve6]=Reserve6.Simple,Reserve6.2Initiators,Reserve6.Logout,Reserve6.ITNexusLoss
)

# gw_cu SPEC LOG: iscsi-test-cu -d over the comma-separated tests of SPEC
# (SCSI. omitted) with gateway 1's and 2's URLs as two paths of one LU,
# its output in LOG (cu.sh). RESULTS gets one "Suite.Test verdict" line
# per test SPEC names, in order: passed, FAILED, skipped (the test skipped
# itself: not a pass), partial (it skipped a part) or missing (the run
# never reported it). Fails when SPEC names no test or the two URLs are
# not one LU.
gw_cu() {
	local spec=$1 log=$2 names=() e t r n
	for e in ${spec//,/ }; do
		n=${#names[@]}
		mapfile -t -O "$n" names < <(cu_tests "SCSI.$e")
		[ "${#names[@]}" -gt "$n" ] ||
			fail "$spec: '$e' names no iscsi-test-cu test"
	done
	CLIENT_TIMEOUT=$CONFORMANCE_TIMEOUT cu_run "$log" -d \
		-i "$INITIATOR" -I "$INITIATOR2" --test="SCSI.${spec//,/,SCSI.}" \
		"${GW_URL[1]}" "${GW_URL[2]}"
	grep -q 'found matching LU device identifier for all (2) paths' "$log" ||
		{ cat "$log"; fail "$spec: iscsi-test-cu did not take the two URLs as one LU"; }
	declare -A got=()
	while IFS=$'\t' read -r t r _; do
		[ "$t" = NOSUMMARY ] && { cat "$log"; fail "$spec: no CUnit summary"; }
		[ "$r" = failed ] && r=FAILED
		got[${t#SCSI.}]=$r
	done < <(cu_results "$log" SCSI)
	RESULTS=
	for t in "${names[@]}"; do
		t=${t#SCSI.}
		RESULTS+="$t ${got[$t]:-missing}"$'\n'
	done
	RESULTS=${RESULTS%$'\n'}
}
