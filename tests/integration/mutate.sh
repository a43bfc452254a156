#!/bin/bash
# Thousands of mutated PDUs from valid sessions (tests/integration/mutate.c)
# against a live tcqd: it must stay up, keep serving a clean session that
# writes and reads back its data, and still exit 0 on SIGTERM.
# MUTATE_PDUS, MUTATE_SECONDS and MUTATE_SEED override the defaults
# (5000 PDUs, 20 s, a fresh seed that the log prints for replay).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

MUTATE=${MUTATE:-$top_builddir/tests/integration/mutate}
need_built "$MUTATE"
SEED=${MUTATE_SEED:-$(( ($(date +%s) << 16) ^ $$ ))}

fixture_mutate() { start_tcqd --iqn iqn.2026-11.org.tcq:mutate; }

mutated_pdus_then_clean_session_works() {
	local rc=0
	run "$MUTATE" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" \
		"${MUTATE_PDUS:-5000}" "${MUTATE_SECONDS:-20}" "$SEED" || rc=$?
	[ "$rc" -eq 124 ] && fail "mutate timed out (seed $SEED)"
	tcqd_alive
	ok "tcqd still running (seed $SEED)"
	[ "$rc" -eq 0 ] || fail "mutate reported failures (status $rc, seed $SEED)"
	grep -q '^mutate: ok: clean READ status 0' <<<"$OUT" &&
		grep -q '^mutate: ok: data read back equals data written' <<<"$OUT" ||
		fail "mutate did not report its clean session's data read back"
	ok "a clean session writes and reads back its data afterwards"
	log_grep -q 'Sanitizer\|runtime error' &&
		fail "sanitizer report in the tcqd log (seed $SEED)"
	ok "no sanitizer report in the tcqd log"
}

CHECKS=(
	@mutate
	mutated_pdus_then_clean_session_works
)
run_checks "$@"
