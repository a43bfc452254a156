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
[ -x "$TASKS" ] || fail "tasks not built at $TASKS (make check builds it)"

make_lun "$TEST_TMP/lun0.img" 64M
for pol in drain flush ignore; do
	parts=mn
	[ "$pol" = flush ] && parts=n
	[ "$pol" = ignore ] && parts=n
	start_tcqd --export "$TEST_TMP/lun0.img" --size 64M --threads 2 \
		--barrier "$pol" --state-dir "$TEST_TMP"
	rc=0
	run "$TASKS" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" "$parts" || rc=$?
	[ "$rc" -eq 124 ] && fail "barrier=$pol: tasks timed out"
	case $pol in
	drain | flush)
		[ "$rc" -eq 0 ] ||
			fail "barrier=$pol: tasks reported failures (status $rc)"
		ok "barrier=$pol: every check passed"
		;;
	ignore)
		[ "$rc" -eq 1 ] || fail "barrier=ignore: expected status 1, got $rc"
		n=$(grep -c 'FAIL: (n) .*OUT OF ORDER' <<<"$OUT" || true)
		[ "$n" -ge 2 ] ||
			fail "barrier=ignore: want both ORDERED checks to see OUT OF ORDER, saw $n"
		ok "barrier=ignore: ORDERED tasks are overtaken, and tasks sees it"
		;;
	esac
	tcqd_alive
	stop_tcqd
done

pass "all checks passed"
