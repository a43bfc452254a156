#!/bin/bash
# The write data rules of RFC 7143 across InitialR2T, ImmediateData,
# FirstBurstLength, MaxBurstLength and MaxOutstandingR2T
# (tests/integration/bursts.c): the negotiated results, the immediate and
# unsolicited data, every R2T as it comes, the data read back; and data
# past the limits refused as RFC 7143 11.4.7.2 and 11.17 say. Two tcqd
# configurations: one that lets the initiator's offers decide
# (InitialR2T=No, ImmediateData=Yes, large bursts), one whose own offers
# win (InitialR2T=Yes, ImmediateData=No, FirstBurstLength 8K,
# MaxBurstLength 16K, MaxOutstandingR2T 2, 4K segments). The driver is
# told what tcqd offers and computes every expected value itself.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BURSTS=${BURSTS:-$top_builddir/tests/integration/bursts}
need_built "$BURSTS"

IQN=iqn.2026-11.org.tcq:r2t

# r2t_tcqd IR2T IMM FBL MBL MOR2T MRDSL: tcqd offering these.
r2t_tcqd() {
	local conf=$TEST_TMP/tcqd.conf yn=(no yes)
	tcqd_conf "$conf" "$IQN" 64M "initial_r2t = ${yn[$1]}" \
		"immediate_data = ${yn[$2]}" "first_burst_length = $3" \
		"max_burst_length = $4" "max_outstanding_r2t = $5" \
		"max_recv_data_segment_length = $6" \
		"max_transfer_length = 4M"
	start_tcqd -c "$conf"
	KEYS=$(IFS=,; echo "$*")
}
fixture_wide() { r2t_tcqd 0 1 262144 1048576 8 16384; PREFIX=wide_; }
fixture_narrow() { r2t_tcqd 1 0 8192 16384 2 4096; PREFIX=narrow_; }

r2t_case() { pdu_case "$BURSTS" -T "$KEYS" "${1#"$PREFIX"}"; }

CHECKS=(
	@wide
	r2t_case:wide_matrix_r2t_yes_imm_yes
	r2t_case:wide_matrix_r2t_yes_imm_no
	r2t_case:wide_matrix_r2t_no_imm_yes
	r2t_case:wide_matrix_r2t_no_imm_no
	r2t_case:wide_unsolicited_past_first_burst_fails_0c0d
	r2t_case:wide_unsolicited_short_of_first_burst_fails_0c0d
	r2t_case:wide_r2t_answer_past_desired_length_fails_0c0d
	r2t_case:wide_r2t_answer_short_with_final_fails_0c0d
	r2t_case:wide_unsolicited_with_initial_r2t_yes_fails_0c0c
	r2t_case:wide_immediate_past_first_burst_rejected
	@narrow
	r2t_case:narrow_matrix_r2t_yes_imm_yes
	r2t_case:narrow_matrix_r2t_no_imm_no
)
run_checks "$@"
