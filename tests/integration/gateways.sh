# shellcheck shell=bash
# Several tcqd gateways of one logical unit, for alua.sh, rbd-gateways.sh
# and rbd-failover.sh (source lib.sh first). Gateways are numbered; each
# gets its own portal on 127.0.0.1:0.
#
#   gw_start N ARGS...   tcqd ARGS... as gateway N; waits (20 s at most)
#                        for its URL; sets GW_PID[N], GW_URL[N], GW_LOG[N]
#   gw_stop N...         SIGTERM to each, and a clean exit within 10 s
#   gw_kill_all          SIGKILL to every gateway still running (cleanup)
#   gw_cu SPEC LOG       iscsi-test-cu over gateways 1 and 2 (below)

declare -A GW_PID=() GW_URL=() GW_LOG=()
GW_STARTS=0

gw_start() {
	local n=$1 out log line i
	shift
	GW_STARTS=$((GW_STARTS + 1))
	out=$TEST_TMP/tcqd.gw$n-$GW_STARTS.out
	log=$TEST_TMP/tcqd.gw$n-$GW_STARTS.log
	: >"$out"
	"$TCQD" "$@" --listen 127.0.0.1:0 >"$out" 2>"$log" &
	GW_PID[$n]=$!
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
	done
}

gw_kill_all() {
	local pid
	for pid in "${GW_PID[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	GW_PID=()
}

# gw_cu SPEC LOG: iscsi-test-cu -d over the comma-separated tests of SPEC
# (SCSI. omitted) with gateway 1's and 2's URLs as two paths of one LU;
# the output goes to LOG and RESULTS gets one "Suite.Test passed|FAILED"
# line per test. Fails when the two URLs are not one LU or nothing ran.
gw_cu() {
	local spec=$1 log=$2 tests rc=0
	tests=SCSI.${spec//,/,SCSI.}
	CLIENT_TIMEOUT=$CONFORMANCE_TIMEOUT tc iscsi-test-cu -d \
		-i "$INITIATOR" -I "$INITIATOR2" --test="$tests" \
		"${GW_URL[1]}" "${GW_URL[2]}" >"$log" 2>&1 || rc=$?
	grep -q 'found matching LU device identifier for all (2) paths' "$log" ||
		{ cat "$log"; fail "$spec: iscsi-test-cu did not take the two URLs as one LU"; }
	# "Suite: S", then "  Test: NAME ...passed|FAILED", the verdict maybe
	# on a later line; printed as "S.NAME verdict".
	RESULTS=$(awk '/^Suite: / { suite = $2; next }
		/^  Test: / { name = suite "." $2
			if ($0 ~ /\.\.\.passed/) { print name, "passed"; name = "" }
			else if ($0 ~ /\.\.\.FAILED/) { print name, "FAILED"; name = "" }
			next }
		name != "" && /^passed/ { print name, "passed"; name = "" }
		name != "" && /^FAILED/ { print name, "FAILED"; name = "" }' "$log")
	[ -n "$RESULTS" ] || { cat "$log"; fail "$spec: no test results (status $rc)"; }
}
