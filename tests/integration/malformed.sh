#!/bin/bash
# Malformed and out-of-window PDUs (tests/integration/badpdu.c), one check
# each: each is answered as RFC 7143 says, a clean session works
# afterwards, and tcqd survives it all and still exits 0 on SIGTERM; the
# CmdSN window is 128 wide by default and 7 with --cmd-window 7.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_built "$BADPDU"

fixture_malformed() {
	start_tcqd --iqn iqn.2026-11.org.tcq:malformed
}

badpdu_case() { pdu_case "$BADPDU" "$1"; }

# tcqd --cmd-window 7: the window a session gets is 7 wide.
fixture_window() {
	start_tcqd --iqn iqn.2026-11.org.tcq:window --cmd-window 7
}

window_of_7() { TCQ_CMD_WINDOW=7 pdu_case "$BADPDU" cmd_window_as_configured; }

CHECKS=(
	@malformed
	badpdu_case:truncated_login_header_then_close
	badpdu_case:truncated_pdu_mid_session_then_close
	badpdu_case:oversize_data_segment_rejected_04_or_dropped
	badpdu_case:unknown_opcode_rejected_05_then_ping_answered
	badpdu_case:cmdsn_outside_window_ignored
	badpdu_case:cmd_window_as_configured
	badpdu_case:clean_session_after_malformed_pdus
	@window
	window_of_7
	@
)
run_checks "$@"
