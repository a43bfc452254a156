#!/bin/bash
# Session behaviour at the PDU level (tests/integration/sessions.c):
# reinstatement, NOP-In liveness, Text and Login continuation, ABORT TASK
# and LUN RESET, Logout with a READ outstanding, and connections joining a
# session. tcqd runs from a generated config: short NOP timers, and 300
# targets so that SendTargets=All needs many Text Responses.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SESSIONS=${SESSIONS:-$top_builddir/tests/integration/sessions}
[ -x "$SESSIONS" ] || fail "sessions not built at $SESSIONS (make check builds it)"

IQN=iqn.2026-11.org.tcq:sessions
NEXTRA=299
CONF=$TEST_TMP/tcqd.conf
{
	cat <<EOF
[global]
listen = 127.0.0.1:0
threads = 2
nop_interval = 1
nop_timeout = 2
; (j) reads this much at once
max_transfer_length = 8M

[target $IQN]
[lun $IQN 0]
path = $TEST_TMP/lun0.img
size = 64M
block_size = 512
create = yes
EOF
	# Targets without LUNs (tcqd warns): they only need to be discovered.
	for ((i = 1; i <= NEXTRA; i++)); do
		printf '[target %s-t%03d]\n' "$IQN" "$i"
	done
} >"$CONF"

start_tcqd -c "$CONF"
[ "$TCQD_IQN" = "$IQN" ] || fail "first URL is for $TCQD_IQN, not $IQN"
say "\$ sessions $TCQD_HOST $TCQD_PORT $TCQD_IQN $NEXTRA"
rc=0
tc "$SESSIONS" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" "$NEXTRA" || rc=$?
[ "$rc" -eq 124 ] && fail "sessions timed out"
[ "$rc" -eq 0 ] || fail "sessions reported failures (status $rc)"
tcqd_alive
ok "tcqd still running"
stop_tcqd

pass "all checks passed"
