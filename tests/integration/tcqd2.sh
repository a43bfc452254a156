# shellcheck shell=bash
# A second tcqd beside the one lib.sh starts (redirect.sh and
# tests/guest/redirect.sh: the tcqd a redirect sends logins to). Source it
# after lib.sh.
#
#   tcqd2_start CONF   tcqd -c CONF (which listens on 127.0.0.1:0); waits
#                      (10 s at most) for its URL; sets TCQD2_PID,
#                      TCQD2_ADDR (127.0.0.1:PORT), TCQD2_PORT, TCQD2_LOG
#   tcqd2_stop         SIGTERM, and a clean exit within 10 s with no
#                      sanitizer report in its log (asserted)
#   tcqd2_exit_hook    SIGTERM (tcqd_end) when the shell that started it
#                      ends: call it from the script's exit_hook (checks.sh)

TCQD2_PID=""
TCQD2_OWNER=""
TCQD2_ADDR=""
TCQD2_PORT=""
TCQD2_LOG=""

tcqd2_exit_hook() {
	[ -n "$TCQD2_PID" ] && [ "$TCQD2_OWNER" = "$BASHPID" ] || return 0
	tcqd_end "$TCQD2_PID"
	TCQD2_PID=""
}

tcqd2_start() {
	local out=$TEST_TMP/tcqd2.out line i
	TCQD2_LOG=$TEST_TMP/tcqd2.log
	"$TCQD" -c "$1" >"$out" 2>"$TCQD2_LOG" &
	TCQD2_PID=$! TCQD2_OWNER=$BASHPID
	for ((i = 0; i < 100; i++)); do
		line=$(grep -m1 '^iscsi://' "$out" || true)
		[ -n "$line" ] && break
		kill -0 "$TCQD2_PID" 2>/dev/null ||
			{ cat "$TCQD2_LOG"; fail "the second tcqd exited before printing its URL"; }
		sleep 0.1
	done
	[ -n "$line" ] || fail "the second tcqd printed no URL within 10 s"
	TCQD2_ADDR=$(sed -E 's#^iscsi://([^/]+)/.*#\1#' <<<"$line")
	TCQD2_PORT=${TCQD2_ADDR##*:}
	say "the second tcqd, pid $TCQD2_PID, at $TCQD2_ADDR"
}

tcqd2_stop() {
	local rc=0
	kill -TERM "$TCQD2_PID" 2>/dev/null || fail "the second tcqd died on its own"
	# shellcheck disable=SC2016  # eval expands it
	wait_until 100 eval '! kill -0 "$TCQD2_PID" 2>/dev/null' ||
		fail "the second tcqd did not exit on SIGTERM"
	wait "$TCQD2_PID" || rc=$?
	TCQD2_PID=""
	[ "$rc" -eq 0 ] || fail "the second tcqd exited with status $rc"
	rc=$(san_reports_in "$TCQD2_LOG")
	[ -z "$rc" ] || fail "the second tcqd: sanitizer report: $rc"
	ok "the second tcqd exited cleanly on SIGTERM"
}
