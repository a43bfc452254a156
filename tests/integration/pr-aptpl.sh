#!/bin/bash
# Persistent reservations made with APTPL survive a restart of tcqd: the
# state goes to --state-dir (one file per target and LUN) and is read back
# at start-up; the other initiator sees the same keys and reservation.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

PRCLIENT=${PRCLIENT:-$top_builddir/tests/integration/prclient}
need_built "$PRCLIENT"
STATE=$TEST_TMP/state
FILE=$STATE/iqn.2026-11.org.tcq_aptpl-lun0.pr
mkdir -p "$STATE"
make_lun "$TEST_TMP/lun0.img" 16M
ARGS=(--export "$TEST_TMP/lun0.img" --size 16M --state-dir "$STATE"
	--iqn iqn.2026-11.org.tcq:aptpl)

fixture_first() { start_tcqd "${ARGS[@]}"; }
fixture_restart() { start_tcqd "${ARGS[@]}"; }

# check_reserved INITIATOR: prclient sees key 0x7c0ffee5 holding a Write
# Exclusive reservation.
check_reserved() {
	run "$PRCLIENT" "$TCQD_URL" "$1" check || fail "not registered and reserved"
	grep -qx 'reserved by 0x7c0ffee5 type 1' <<<"$OUT" ||
		fail "no Write Exclusive reservation by 0x7c0ffee5"
	ok "$1 sees the registration and the reservation"
}

aptpl_reservation_seen_by_other_initiator() {
	run "$PRCLIENT" "$TCQD_URL" "$INITIATOR" set || fail "register/reserve"
	ok "$INITIATOR registered with APTPL and reserved"
	check_reserved "$INITIATOR2"
	[ -s "$FILE" ] || fail "no APTPL state file $FILE"
	ok "APTPL state in $(basename "$FILE")"
}

aptpl_state_loaded_at_restart() {
	grep -q "pr: .*1 registration, reserved" "$TCQD_LOG" ||
		fail "tcqd did not report loading the reservation"
	ok "tcqd loaded 1 registration and the reservation"
}

aptpl_reservation_survives_restart() {
	check_reserved "$INITIATOR2"
}

aptpl_clear_ends_registration_and_reservation() {
	local rc=0
	run "$PRCLIENT" "$TCQD_URL" "$INITIATOR" clear || fail "clear"
	run "$PRCLIENT" "$TCQD_URL" "$INITIATOR" check || rc=$?
	[ "$rc" -eq 1 ] || fail "check after CLEAR: status $rc, expected 1"
	grep -qx 'not reserved' <<<"$OUT" || fail "still reserved after CLEAR"
	grep -q '^key ' <<<"$OUT" && fail "a key is still registered after CLEAR"
	ok "after CLEAR: no key, not reserved"
}

# A state file that is not ours stops tcqd from starting.
corrupt_state_file_refused() {
	local rc=0
	echo garbage >"$FILE"
	"$TCQD" "${ARGS[@]}" --listen 127.0.0.1:0 >"$TEST_TMP/bad.out" \
		2>"$TEST_TMP/bad.log" </dev/null || rc=$?
	[ "$rc" -ne 0 ] || fail "tcqd started with a corrupt state file"
	grep -q "not a tcq reservation state file" "$TEST_TMP/bad.log" ||
		fail "no message about the corrupt state file"
	ok "corrupt state file refused (status $rc) with a message"
}

CHECKS=(
	@first
	aptpl_reservation_seen_by_other_initiator
	@restart
	aptpl_state_loaded_at_restart
	aptpl_reservation_survives_restart
	aptpl_clear_ends_registration_and_reservation
	@
	corrupt_state_file_refused
)
run_checks "$@"
