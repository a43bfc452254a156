#!/bin/bash
# The Logout reasons of RFC 7143 11.14 (tests/integration/logout.c): close
# the session, close the connection (ours, and a CID that is not there),
# remove the connection for recovery at ErrorRecoveryLevel 0, each with
# the Logout Response code of 11.15.1 and what becomes of the connection;
# Time2Wait honoured; a Logout that waits for a READ still sending data.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

LOGOUT=${LOGOUT:-$top_builddir/tests/integration/logout}
need_built "$LOGOUT"
IQN=iqn.2026-11.org.tcq:logout

# The READ that a Logout waits for is 8 MiB long.
fixture_logout() {
	tcqd_conf "$TEST_TMP/tcqd.conf" "$IQN" 16M "max_transfer_length = 8M"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
}

logout_case() { pdu_case "$LOGOUT" "$1"; }

CHECKS=(
	@logout
	logout_case:logout_close_session_answers_0_then_connection_closed
	logout_case:logout_close_connection_answers_0_then_connection_closed
	logout_case:logout_close_unknown_cid_answers_1
	logout_case:logout_remove_for_recovery_at_erl0_answers_2
	logout_case:logout_again_after_time2wait_succeeds
	logout_case:logout_response_header_is_well_formed
	logout_case:logout_close_session_ends_session
	logout_case:logout_waits_for_outstanding_read
)
run_checks "$@"
