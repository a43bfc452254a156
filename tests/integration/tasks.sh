#!/bin/bash
# Task management across sessions and task attributes on the wire
# (tests/integration/tasks.c): LUN RESET and PREEMPT AND ABORT from one
# initiator end another's write that waits for Data-Out; ORDERED, SIMPLE
# and HEAD OF QUEUE tasks keep SAM-5 order around writes waiting for
# their data. Run with barrier=drain and barrier=flush; with
# barrier=ignore (ORDERED runs as SIMPLE) the ordering checks must fail,
# which proves they can.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TASKS=${TASKS:-$top_builddir/tests/integration/tasks}
need_built "$TASKS"

# barrier POLICY: tcqd on one 64 MiB file with that barrier policy; the
# group's checks are named barrier_POLICY_ + the case of tasks.c.
barrier() {
	[ -f "$TEST_TMP/lun0.img" ] || make_lun "$TEST_TMP/lun0.img" 64M
	start_tcqd --export "$TEST_TMP/lun0.img" --size 64M --threads 2 \
		--barrier "$1" --state-dir "$TEST_TMP"
	PREFIX=barrier_$1_
}
fixture_drain() { barrier drain; }
fixture_flush() { barrier flush; }
fixture_ignore() { barrier ignore; }

tasks_case() { pdu_case "$TASKS" "${1#"$PREFIX"}"; }

barrier_ignore_ordered_write_overtaken_and_seen() {
	pdu_case_fails "$TASKS" ordered_write_waits_for_older_simple_write "OUT OF ORDER"
}
barrier_ignore_simple_read_overtakes_and_is_seen() {
	pdu_case_fails "$TASKS" simple_read_waits_for_older_ordered_write "OUT OF ORDER"
}

CHECKS=(
	@drain
	tasks_case:barrier_drain_lun_reset_from_other_initiator_aborts_waiting_write
	tasks_case:barrier_drain_preempt_and_abort_aborts_waiting_write_of_preempted
	tasks_case:barrier_drain_ordered_write_waits_for_older_simple_write
	tasks_case:barrier_drain_simple_read_waits_for_older_ordered_write
	tasks_case:barrier_drain_head_of_queue_passes_waiting_ordered_write
	@flush
	tasks_case:barrier_flush_ordered_write_waits_for_older_simple_write
	tasks_case:barrier_flush_simple_read_waits_for_older_ordered_write
	tasks_case:barrier_flush_head_of_queue_passes_waiting_ordered_write
	@ignore
	barrier_ignore_ordered_write_overtaken_and_seen
	barrier_ignore_simple_read_overtakes_and_is_seen
)
run_checks "$@"
