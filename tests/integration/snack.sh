#!/bin/bash
# SNACK at ErrorRecoveryLevel=0 (tests/integration/snack.c): every SNACK
# type is answered with a Reject, reason 04h (Protocol Error), that
# carries the SNACK's header (and for a Data/R2T SNACK the task's next
# R2TSN), and the session goes on (RFC 7143 11.16, 11.17).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SNACK=${SNACK:-$top_builddir/tests/integration/snack}
need_built "$SNACK"

IQN=iqn.2026-11.org.tcq:snack

fixture_snack() {
	local conf=$TEST_TMP/tcqd.conf
	tcqd_conf "$conf" "$IQN" 64M "max_burst_length = 16384" \
		"first_burst_length = 8192" \
		"max_outstanding_r2t = 1"
	start_tcqd -c "$conf"
}

snack_case() { pdu_case "$SNACK" "$1"; }

CHECKS=(
	@snack
	snack_case:data_r2t_snack_rejected_04_with_next_r2tsn
	snack_case:status_snack_rejected_04
	snack_case:data_ack_rejected_04
	snack_case:rdata_snack_rejected_04
)
run_checks "$@"
