#!/bin/bash
# Every task management function one by one (tests/integration/tmf.c),
# each with the response RFC 7143 11.6.1 prescribes and its effect on the
# tasks and unit attentions (SAM-5): ABORT TASK (and its RefCmdSN rules),
# ABORT TASK SET, CLEAR TASK SET, CLEAR ACA, LOGICAL UNIT RESET, TARGET
# WARM and COLD RESET, I_T NEXUS RESET, QUERY TASK and QUERY TASK SET
# (RFC 7144), TASK REASSIGN at ErrorRecoveryLevel 0, functions nobody
# defined, and functions to a LUN that does not exist.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TMF=${TMF:-$top_builddir/tests/integration/tmf}
need_built "$TMF"
IQN=iqn.2026-11.org.tcq:tmf

# Two LUNs: a reset of the target is seen on both.
fixture_tmf() {
	tcqd_conf "$TEST_TMP/tcqd.conf" "$IQN" 16M
	printf '\n[lun %s 1]\nbackend = ram:size=8M\n' "$IQN" >>"$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
}

tmf_case() { pdu_case "$TMF" "$1"; }


CHECKS=(
	@tmf
	tmf_case:abort_task_of_waiting_write_answers_0
	tmf_case:abort_task_unknown_itt_below_window_answers_1
	tmf_case:abort_task_unknown_itt_above_window_answers_1
	tmf_case:abort_task_of_lost_command_fills_cmdsn_hole
	tmf_case:abort_task_set_answers_0_and_aborts_own_write
	tmf_case:abort_task_set_spares_other_nexus_tasks
	tmf_case:clear_task_set_answers_0_and_aborts_own_write
	tmf_case:clear_task_set_affects_other_nexus_as_tst_says
	tmf_case:clear_aca_without_aca_answers_0
	tmf_case:clear_aca_ends_aca_condition
	tmf_case:lun_reset_answers_0_and_aborts_own_write
	tmf_case:target_warm_reset_resets_every_lun
	tmf_case:target_warm_reset_aborts_own_write
	tmf_case:i_t_nexus_reset_answers_0_and_aborts_own_write
	tmf_case:i_t_nexus_reset_reports_nexus_loss
	tmf_case:query_task_of_waiting_write_answers_7
	tmf_case:query_task_of_unknown_task_answers_0
	tmf_case:query_task_set_with_waiting_write_answers_7
	tmf_case:query_task_set_empty_answers_0
	tmf_case:task_reassign_at_erl0_answers_4
	tmf_case:unknown_function_answers_5
	tmf_case:lu_functions_to_missing_lun_answer_2
	tmf_case:tmf_response_header_is_well_formed
	# last: it ends every session of the target
	tmf_case:target_cold_reset_closes_every_connection
)
run_checks "$@"
