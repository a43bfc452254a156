#!/bin/bash
# Malformed and out-of-window PDUs (tests/integration/badpdu.c): each is
# answered as RFC 7143 says, a clean session works afterwards, and tcqd
# survives it all and still exits 0 on SIGTERM.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

[ -x "$BADPDU" ] || fail "badpdu not built at $BADPDU (make check builds it)"

start_tcqd --iqn iqn.2026-11.org.tcq:malformed
say "\$ badpdu $TCQD_HOST $TCQD_PORT $TCQD_IQN"
rc=0
tc "$BADPDU" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" || rc=$?
[ "$rc" -eq 124 ] && fail "badpdu timed out"
[ "$rc" -eq 0 ] || fail "badpdu reported failures (status $rc)"
tcqd_alive
ok "tcqd still running"
stop_tcqd

pass "all checks passed"
