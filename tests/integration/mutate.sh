#!/bin/bash
# Thousands of mutated PDUs from valid sessions (tests/integration/mutate.c)
# against a live tcqd: it must stay up, keep serving a clean session that
# writes and reads back its data, and still exit 0 on SIGTERM.
# MUTATE_PDUS, MUTATE_SECONDS and MUTATE_SEED override the defaults
# (5000 PDUs, 20 s, a fresh seed that the log prints for replay).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

MUTATE=${MUTATE:-$top_builddir/tests/integration/mutate}
[ -x "$MUTATE" ] || fail "mutate not built at $MUTATE (make check builds it)"
seed=${MUTATE_SEED:-$(( ($(date +%s) << 16) ^ $$ ))}

start_tcqd --iqn iqn.2026-11.org.tcq:mutate
say "\$ mutate $TCQD_HOST $TCQD_PORT $TCQD_IQN ${MUTATE_PDUS:-5000} ${MUTATE_SECONDS:-20} $seed"
rc=0
tc "$MUTATE" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" "${MUTATE_PDUS:-5000}" \
	"${MUTATE_SECONDS:-20}" "$seed" || rc=$?
[ "$rc" -eq 124 ] && fail "mutate timed out (seed $seed)"
tcqd_alive
ok "tcqd still running"
[ "$rc" -eq 0 ] || fail "mutate reported failures (status $rc, seed $seed)"
if grep -q 'Sanitizer\|runtime error' "$TCQD_LOG"; then
	fail "sanitizer report in the tcqd log (seed $seed)"
fi
stop_tcqd
pass "target survived the mutated PDUs (seed $seed)"
