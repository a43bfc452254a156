# shellcheck shell=bash
# Helpers for the integration tests: each test sources this file, starts
# its own tcqd on a free loopback port (127.0.0.1:0) with LUN files in its
# own temp dir, and drives it with real clients. Tests therefore run in
# parallel (make -j check) without stepping on each other.
#
# Each script is a list of named checks run by checks.sh, whose output is
# TAP: one result line per check. A tool missing for the whole script
# skips it ("1..0 # SKIP"), except under scripts/check and in CI, where
# every tool is installed and a skip fails (checks.sh, skips_fail).

set -u
set -o pipefail

TEST_NAME=$(basename "$0" .sh)
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$(pwd)}"
: "${CLIENT_TIMEOUT:=60}"
TCQD=${TCQD:-$top_builddir/tcqd}
BADPDU=${BADPDU:-$top_builddir/tests/integration/badpdu}
export INITIATOR=iqn.2026-11.org.tcq:test-initiator
export INITIATOR2=iqn.2026-11.org.tcq:test-initiator-2

TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tcq-$TEST_NAME.XXXXXX") || exit 99
TCQD_PID=
TCQD_RUNS=0
# TCQ_TEST_IO_ENGINE=uring|aio|auto: every tcqd the test starts runs that
# io engine (scripts/check runs its two passes on different ones).
# start_tcqd passes --io-engine itself; a test that starts "$TCQD" on its
# own gets it from a wrapper that execs tcqd (same PID) with it first.
TCQD_BIN=$TCQD
if [ -n "${TCQ_TEST_IO_ENGINE:-}" ]; then
	TCQD=$TEST_TMP/tcqd
	printf '#!/bin/sh\nexec "%s" --io-engine "%s" "$@"\n' "$TCQD_BIN" \
		"$TCQ_TEST_IO_ENGINE" >"$TCQD" && chmod +x "$TCQD" || exit 99
fi
TCQD_LOG=
TCQD_OUT=

say() { printf '%s: %s\n' "$TEST_NAME" "$*"; }

# shellcheck source=tests/integration/checks.sh
. "$top_srcdir/tests/integration/checks.sh"

# need_tool CMD...: skip when a client is truly unavailable.
need_tool() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			skip "$t not installed (scripts/check installs it)"
	done
}

# need_built PATH...: programs make builds; missing, the script cannot run.
need_built() {
	local p
	for p in "$@"; do
		[ -x "$p" ] || fail "$(basename "$p") not built at $p (make check builds it)"
	done
}

# tc CMD ARGS...: runs a client with a hard time limit so nothing hangs.
tc() {
	timeout -k 5 "$CLIENT_TIMEOUT" "$@"
}

# run CMD ARGS...: runs a client, shows its output, and stores it in $OUT.
# Returns the client's status.
OUT=
run() {
	local rc=0
	say "\$ $(printf '%q ' "$@")"
	OUT=$(tc "$@" 2>&1) || rc=$?
	[ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/    /'
	[ "$rc" -eq 124 ] && say "(timed out after ${CLIENT_TIMEOUT}s)"
	return "$rc"
}

# log_since_mark: what tcqd logged since the check began (checks.sh).
log_since_mark() {
	tail -c +"$((${LOG_MARK[$TCQD_LOG]:-0} + 1))" "$TCQD_LOG"
}

# wait_until TENTHS CMD...: runs CMD every 0.1 s until it succeeds, at
# most TENTHS times; returns its last status.
wait_until() {
	local n=$1 i
	shift
	for ((i = 1; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# logins: how many logins the running tcqd has logged; wait_logins N:
# waits (at most 30 s) until it has logged N, so that a load started in
# the background is running before a check acts on it (a fixed sleep
# decides nothing on a slow or loaded machine).
logins() { grep -c ': logged in (' "$TCQD_LOG" || true; }
logins_reach() { [ "$(logins)" -ge "$1" ]; }
wait_logins() {
	wait_until 300 logins_reach "$1" ||
		fail "tcqd logged $(logins) logins within 30 s, not $1"
}

# load_running SOCKET N: the tcqd serving tcqctl on SOCKET has completed
# N commands or more on its LUNs and has some in flight now;
# wait_load_running SOCKET N waits (at most 30 s) for it, so that a check
# acts on a load that is under way (writes acknowledged, more in flight),
# not after a fixed time. Needs jq.
load_running() {
	tc "${TCQCTL:-$top_builddir/tcqctl}" -s "$1" --json stats 2>/dev/null |
		jq -e --argjson n "$2" '([.luns[].commands.completed] | add) >= $n and
			([.luns[].inflight.current] | add) > 0' >/dev/null
}
wait_load_running() {
	wait_until 300 load_running "$1" "$2" ||
		fail "no load with $2 commands done and more in flight within 30 s"
}

# log_grep GREP-ARGS...: grep in what tcqd logged during the check (not
# in a pipe: under pipefail an early grep -q would fail tail).
log_grep() {
	grep "$@" < <(log_since_mark)
}

# log_has TEXT WHAT: tcqd must log TEXT during this check (within 2 s:
# the log is line-buffered, and a reactor may log after the client ends).
log_has() {
	wait_until 20 log_grep -qF -- "$1" ||
		fail "$2: no '$1' in what tcqd logged during the check"
	ok "$2"
}

# login_refused STATUS WHAT CMD...: the login CMD makes must fail with the
# login status STATUS (RFC 7143 11.13.5, e.g. 0x0201), as the client
# reports it (libiscsi: "Status: TEXT(DECIMAL)"; tcq-bench: "status class
# 0xCC detail 0xDD") and as tcqd logs it ("failed (0xSSSS)").
login_refused() {
	local st=$1 what=$2 dec
	shift 2
	dec=$((st))
	if run "$@"; then
		fail "$what: the login succeeded"
	fi
	grep -Eq "Status: [^(]*\($dec\)|status class $(printf '0x%02x detail 0x%02x' \
		$((dec >> 8)) $((dec & 255)))" <<<"$OUT" ||
		fail "$what: the client does not report login status $st"
	log_has "failed ($st)" "$what: refused with login status $st"
}

# order_check_clean URL: tcq-bench order-check finds SAM-5 order kept.
order_check_clean() {
	run "$top_builddir/tcq-bench" order-check --count 2000 "$1" ||
		fail "order-check exit status $?"
	grep -q '^order-check: 0 violations' <<<"$OUT" ||
		fail "order-check did not report 0 violations"
	ok "order-check: 0 violations"
}

# pdu_case PROG [OPTION...] CASE: runs one case of a raw-PDU driver
# (ptcase.c) against the running tcqd; the check passes, fails or skips
# as the case does.
pdu_case() {
	local name=${!#} rc=0 why
	run "${@:1:$#-1}" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" "$name" || rc=$?
	case $rc in
	0)
		grep -q ": case $name: passed$" <<<"$OUT" ||
			fail "$name: no 'passed' line"
		ok "case $name passed" ;;
	77)
		why=$(sed -n "s/.*: case $name: SKIPPED: //p" <<<"$OUT")
		skip "${why:-case $name skipped}" ;;
	124) fail "$name timed out" ;;
	*) fail "$(sed -n 's/^[a-z0-9_-]*: FAIL: //p' <<<"$OUT" | head -n 3 | paste -sd ';' -)" ;;
	esac
}

# pdu_case_fails PROG [OPTION...] CASE TEXT: the case must fail, and say
# TEXT (a check that proves a case can fail: tasks.sh, barrier=ignore).
pdu_case_fails() {
	local text=${!#} rc=0
	set -- "${@:1:$#-1}"
	local name=${!#}
	run "${@:1:$#-1}" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" "$name" || rc=$?
	[ "$rc" -eq 1 ] || fail "$name: status $rc, expected 1 (a failure)"
	grep -q ": case $name: FAILED" <<<"$OUT" || fail "$name: no FAILED line"
	grep -qF -- "$text" <<<"$OUT" || fail "$name failed, but not with '$text'"
	ok "case $name fails with '$text'"
}

# conf_refused FILE PATTERN WHAT: tcqd -c FILE does not start, and its
# error names FILE's line and matches PATTERN (the key: bad input names
# itself, tcqd.conf(5)); WHAT says what FILE holds, for the failure
# message. OUT is the error's first line.
conf_refused() {
	local out rc=0
	out=$TEST_TMP/$(basename "$1").out
	timeout 20 "$TCQD" -c "$1" >"$out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "tcqd started with $3"
	grep -q "$(basename "$1"):[0-9]*: $2" "$out" ||
		fail "$3: the error does not name the file, line and key: $(cat "$out")"
	OUT=$(head -1 "$out")
}

# tcqd_conf FILE IQN SIZE [GLOBAL-LINE...]: a tcqd configuration: it
# listens on 127.0.0.1:0 with two reactors and the GLOBAL-LINEs, and
# serves target IQN whose LUN 0 is a file of SIZE with 512-byte blocks
# (tcqd creates it in the test's temp dir). Append sections for more.
tcqd_conf() {
	local file=$1 iqn=$2 size=$3
	shift 3
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf '%s\n' "$@"
		printf '\n[target %s]\n[lun %s 0]\npath = %s\nsize = %s\n' \
			"$iqn" "$iqn" "$TEST_TMP/lun0.img" "$size"
		printf 'block_size = 512\ncreate = yes\n'
	} >"$file"
}

# make_lun FILE SIZE: a sparse backing file.
make_lun() {
	truncate -s "$2" "$1" || fail "cannot create $1"
}

# start_tcqd ARGS...: starts tcqd in the background. Unless the arguments
# say otherwise it listens on 127.0.0.1:0 and exports a 64 MiB sparse file
# from the test's temp dir. Waits up to 10 s for the URL line and exports
# TCQD_PID, TCQD_URL (iscsi://HOST:PORT/IQN/LUN), TCQD_HOST, TCQD_PORT,
# TCQD_IQN and TCQD_PORTAL (HOST:PORT). Extra URL lines (several targets)
# end up in TCQD_URLS.
start_tcqd() {
	local args=("$@") a has_listen=0 has_export=0 has_cfg=0 line i prev=
	[ -z "$TCQD_PID" ] || fail "start_tcqd: tcqd already running"
	[ -x "$TCQD_BIN" ] || fail "tcqd not built at $TCQD_BIN"
	# First, so that a test's own --io-engine wins.
	[ -z "${TCQ_TEST_IO_ENGINE:-}" ] ||
		args=(--io-engine "$TCQ_TEST_IO_ENGINE" "${args[@]}")
	for a in "$@"; do
		case $a in
		--listen | --listen=*) has_listen=1 ;;
		--export | --export=*) has_export=1 ;;
		-c | --config | --config=*) has_cfg=1 ;;
		--backend=rbd:*) has_export=1 ;;	# needs no path
		esac
		[ "$prev" = --backend ] && [[ $a == rbd:* ]] && has_export=1
		prev=$a
	done
	if [ "$has_cfg" -eq 0 ]; then
		[ "$has_listen" -eq 1 ] || args+=(--listen 127.0.0.1:0)
		if [ "$has_export" -eq 0 ]; then
			make_lun "$TEST_TMP/lun0.img" 64M
			args+=(--export "$TEST_TMP/lun0.img" --size 64M)
		fi
	fi
	TCQD_RUNS=$((TCQD_RUNS + 1))
	TCQD_OUT=$TEST_TMP/tcqd.$TCQD_RUNS.out
	TCQD_LOG=$TEST_TMP/tcqd.$TCQD_RUNS.log
	: >"$TCQD_OUT"
	say "\$ tcqd ${args[*]}"
	"$TCQD_BIN" "${args[@]}" >"$TCQD_OUT" 2>"$TCQD_LOG" &
	TCQD_PID=$!
	export TCQD_PID
	for ((i = 0; i < 100; i++)); do
		# Only a complete line counts (the URL may be mid-write).
		line=$(grep -m1 '^iscsi://' "$TCQD_OUT" || true)
		[ -n "$line" ] && parse_url "$line" && break
		line=
		if ! kill -0 "$TCQD_PID" 2>/dev/null; then
			wait "$TCQD_PID"
			a=$?
			TCQD_PID=
			fail "tcqd exited with status $a before printing its URL"
		fi
		sleep 0.1
	done
	[ -n "$line" ] || fail "tcqd printed no iscsi:// URL within 10 s"
	parse_url "$line" || fail "cannot parse tcqd URL '$line'"
	TCQD_URLS=$(grep '^iscsi://' "$TCQD_OUT")
	export TCQD_URL TCQD_HOST TCQD_PORT TCQD_IQN TCQD_LUN TCQD_PORTAL TCQD_URLS
	say "tcqd pid $TCQD_PID at $TCQD_URL"
}

# parse_url iscsi://HOST:PORT/IQN/LUN -> TCQD_URL, TCQD_HOST ... TCQD_LUN
parse_url() {
	local re='^iscsi://(\[[^]]+\]|[^:/]+):([0-9]+)/([^/]+)/([0-9]+)$'
	[[ $1 =~ $re ]] || return 1
	TCQD_URL=$1
	TCQD_HOST=${BASH_REMATCH[1]}
	TCQD_PORT=${BASH_REMATCH[2]}
	TCQD_IQN=${BASH_REMATCH[3]}
	TCQD_LUN=${BASH_REMATCH[4]}
	TCQD_PORTAL=$TCQD_HOST:$TCQD_PORT
}

# stop_tcqd_rc: SIGTERM by PID, waits up to 10 s; 0 when tcqd exited 0,
# else 1 with the reason in STOP_WHY.
stop_tcqd_rc() {
	local i rc
	STOP_WHY=
	[ -n "$TCQD_PID" ] || { STOP_WHY="no tcqd running"; return 1; }
	if ! kill -0 "$TCQD_PID" 2>/dev/null; then
		rc=0
		wait "$TCQD_PID" || rc=$?
		TCQD_PID=
		STOP_WHY="tcqd died on its own (status $rc)"
		return 1
	fi
	kill -TERM "$TCQD_PID"
	wait_until 100 eval '! kill -0 "$TCQD_PID" 2>/dev/null'
	if kill -0 "$TCQD_PID" 2>/dev/null; then
		kill -KILL "$TCQD_PID" 2>/dev/null
		wait "$TCQD_PID" 2>/dev/null
		TCQD_PID=
		STOP_WHY="tcqd did not exit within 10 s of SIGTERM"
		return 1
	fi
	rc=0
	wait "$TCQD_PID" || rc=$?
	TCQD_PID=
	[ "$rc" -eq 0 ] || { STOP_WHY="tcqd exited with status $rc after SIGTERM"; return 1; }
	rc=$(san_reports_in "$TCQD_LOG")
	[ -z "$rc" ] || { STOP_WHY="sanitizer report in the tcqd log: $rc"; return 1; }
}

# tcqd_end PID: ends a daemon this test started: SIGTERM, so that it
# leaves through its shutdown path and a sanitizer build reports what it
# found (LeakSanitizer looks only at exit), then SIGKILL if it is still
# there 10 s later. Returns its exit status.
tcqd_end() {
	local rc=0
	kill -TERM "$1" 2>/dev/null
	# shellcheck disable=SC2016  # eval expands it
	wait_until 100 eval '! kill -0 "$1" 2>/dev/null' || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null || rc=$?
	return "$rc"
}

# san_reports_in FILE [FROM]: the first lines of an AddressSanitizer,
# LeakSanitizer or UndefinedBehaviorSanitizer report in a daemon's
# stderr FILE from byte FROM on (the sanitizer build, configure
# --enable-sanitizers, writes them there), joined by "; "; nothing when
# there is none.
SAN_RE='ERROR: (Address|Leak)Sanitizer|Sanitizer:DEADLYSIGNAL|: runtime error: |SUMMARY: [A-Za-z]*Sanitizer'
san_reports_in() {
	[ -f "$1" ] || return 0
	tail -c +"$((${2:-0} + 1))" "$1" | grep -E -m 3 -- "$SAN_RE" | paste -sd ';' - || true
}

# san_reports: the same for every tcqd log of the test (tcqd*.log in its
# temp dir) since the check began, each named.
san_reports() {
	local f r
	for f in "$TEST_TMP"/tcqd*.log; do
		r=$(san_reports_in "$f" "${LOG_MARK[$f]:-0}")
		[ -z "$r" ] || printf '%s: %s\n' "$(basename "$f")" "$r"
	done
}

# stop_tcqd: the same, asserted.
stop_tcqd() {
	stop_tcqd_rc || fail "$STOP_WHY"
	ok "tcqd exited cleanly on SIGTERM"
}

# tcqd_alive: fails the test if tcqd has died.
tcqd_alive() {
	if [ -z "$TCQD_PID" ] || ! kill -0 "$TCQD_PID" 2>/dev/null; then
		fail "tcqd is not running any more"
	fi
}

# ---- a session that watches (live changes, unit attentions) ---------------
# watch_start URL: a livecdb session (the script sets LIVECDB) as a
# coprocess; watch CMD sends one "LUN CDB" line and puts the answer in
# $ANS; watch_settle LUN takes a fresh session's power-on unit attention.
watch_start() {
	coproc WATCH { exec "$LIVECDB" "$1" 2>&1; }
	BG_PIDS+=("$WATCH_PID")
	read -r -t 20 ANS <&"${WATCH[0]}" || fail "livecdb did not start"
	[ "$ANS" = READY ] || fail "livecdb: $ANS"
}
watch() {
	printf '%s\n' "$1" >&"${WATCH[1]}"
	read -r -t 30 ANS <&"${WATCH[0]}" || fail "livecdb gave no answer to '$1'"
	say "livecdb: $1 -> $ANS"
}
watch_settle() {
	local i
	for ((i = 0; i < 4; i++)); do
		watch "$1 000000000000"	# TEST UNIT READY
		[ "$ANS" = "GOOD -" ] && return 0
	done
	fail "LUN $1 does not become ready: $ANS"
}

# Cleanup on any exit: stop a tcqd we left running, print logs on failure,
# remove the temp dir (kept when KEEP_TMP is set).
lib_cleanup() {
	local rc=$?
	trap - EXIT
	[ -n "$TCQD_PID" ] && tcqd_end "$TCQD_PID"
	# Checks show their own logs when they fail.
	if [ "$rc" -ne 0 ] && [ "$CTX" = script ] && [ "$TAP_FD" = 1 ] &&
		[ -z "${LOGS_DUMPED:-}" ]; then
		dump_logs
	fi
	if [ -n "${KEEP_TMP:-}" ]; then
		say "temp dir kept: $TEST_TMP"
	else
		rm -rf "$TEST_TMP"
	fi
	exit "$rc"
}
trap lib_cleanup EXIT
trap 'exit 1' INT TERM HUP

# tcqd_fds [KIND]: how many file descriptors the running tcqd holds, or
# of them those whose link names KIND (socket, pipe, anon_inode:...): a
# check that its clients' connections were given back compares two.
tcqd_fds() {
	local f n=0 l
	[ -n "$TCQD_PID" ] && [ -d "/proc/$TCQD_PID/fd" ] ||
		fail "tcqd_fds: no tcqd running"
	for f in /proc/"$TCQD_PID"/fd/*; do
		l=$(readlink "$f") || continue
		[[ $l == "${1:-}"* ]] && n=$((n + 1))
	done
	echo "$n"
}
