#!/bin/bash
# Persistent reservations made with APTPL survive a restart of tcqd: the
# state goes to --state-dir (one file per target and LUN) and is read back
# at start-up; the other initiator sees the same keys and reservation.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

PRCLIENT=${PRCLIENT:-$top_builddir/tests/integration/prclient}
[ -x "$PRCLIENT" ] || fail "prclient not built at $PRCLIENT"
state=$TEST_TMP/state
mkdir -p "$state"
make_lun "$TEST_TMP/lun0.img" 16M
args=(--export "$TEST_TMP/lun0.img" --size 16M --state-dir "$state"
	--iqn iqn.2026-11.org.tcq:aptpl)

start_tcqd "${args[@]}"
run "$PRCLIENT" "$TCQD_URL" "$INITIATOR" set || fail "register/reserve"
run "$PRCLIENT" "$TCQD_URL" "$INITIATOR2" check || fail "state before restart"
file=$state/iqn.2026-11.org.tcq_aptpl-lun0.pr
[ -s "$file" ] || fail "no APTPL state file $file"
ok "APTPL state in $(basename "$file")"
stop_tcqd

start_tcqd "${args[@]}"
grep -q "pr: .*1 registration, reserved" "$TCQD_LOG" ||
	fail "tcqd did not report loading the reservation"
run "$PRCLIENT" "$TCQD_URL" "$INITIATOR2" check ||
	fail "reservation lost across the restart"
ok "registration and reservation survived the restart"
run "$PRCLIENT" "$TCQD_URL" "$INITIATOR" clear || fail "clear"
run "$PRCLIENT" "$TCQD_URL" "$INITIATOR" check && fail "still reserved after CLEAR"
stop_tcqd

# A state file that is not ours stops tcqd from starting.
echo garbage >"$file"
if "$TCQD" "${args[@]}" --listen 127.0.0.1:0 >"$TEST_TMP/bad.out" \
	2>"$TEST_TMP/bad.log"; then
	fail "tcqd started with a corrupt state file"
fi
grep -q "not a tcq reservation state file" "$TEST_TMP/bad.log" ||
	fail "no message about the corrupt state file"
ok "corrupt state file refused"
pass "APTPL reservations persist"
