#!/bin/bash
# Session behaviour at the PDU level (tests/integration/sessions.c):
# reinstatement, NOP-In liveness, Text and Login continuation, and
# connections joining a session, one check per case. tcqd runs from a
# generated config: short NOP timers, and 300 targets so that
# SendTargets=All needs many Text Responses.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SESSIONS=${SESSIONS:-$top_builddir/tests/integration/sessions}
need_built "$SESSIONS"

IQN=iqn.2026-11.org.tcq:sessions
NEXTRA=299

fixture_sessions() {
	local conf=$TEST_TMP/tcqd.conf i
	tcqd_conf "$conf" "$IQN" 64M "nop_interval = 1" "nop_timeout = 2"
	# LUN 1: reads take 1.5 s, so an ended session still has I/O running
	printf '[lun %s 1]\nbackend = delay:latency=1500ms,base=null\nsize = 8M\n' \
		"$IQN" >>"$conf"
	# Targets without LUNs (tcqd warns): they only need to be discovered.
	for ((i = 1; i <= NEXTRA; i++)); do
		printf '[target %s-t%03d]\n' "$IQN" "$i"
	done >>"$conf"
	start_tcqd -c "$conf"
	[ "$TCQD_IQN" = "$IQN" ] || fail "first URL is for $TCQD_IQN, not $IQN"
}

sessions_case() { pdu_case "$SESSIONS" -x "$NEXTRA" "$1"; }

CHECKS=(
	@sessions
	sessions_case:reinstatement_same_isid_closes_old_session
	sessions_case:nop_in_answered_keeps_session
	sessions_case:nop_in_unanswered_ends_session
	sessions_case:text_response_continuation_sendtargets_all
	sessions_case:login_request_continuation_c_bit_acknowledged
	sessions_case:second_connection_refused_0206
	sessions_case:unknown_tsih_refused_020a
	sessions_case:nexus_loss_ends_before_next_session_runs
	sessions_case:reinstatement_ends_old_nexus_before_new_session_runs
)
run_checks "$@"
