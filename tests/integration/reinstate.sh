#!/bin/bash
# Session reinstatement with tasks in flight (tests/integration/reinstate.c,
# RFC 7143 6.3.5): a login with the ISID of a live session and TSIH 0
# closes the old connection and ends its tasks without an answer; what
# was acknowledged stays, what was running is on the LUN whole or not at
# all, a write still waiting for its data never runs, the new session
# works. LUN 1 holds every I/O for 2 s (delay over a file), so the old
# session's tasks are still running when the new login comes. tcqd stays
# up, and stops cleanly afterwards (its sanitizer builds would report a
# leak there).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

REINSTATE=${REINSTATE:-$top_builddir/tests/integration/reinstate}
need_built "$REINSTATE"

IQN=iqn.2026-11.org.tcq:reinstate

fixture_reinstate() {
	local conf=$TEST_TMP/tcqd.conf
	tcqd_conf "$conf" "$IQN" 64M
	printf '[lun %s 1]\npath = %s\nsize = 8M\nblock_size = 512\n' \
		"$IQN" "$TEST_TMP/slow.img" >>"$conf"
	printf 'create = yes\nbackend = delay:latency=2000ms,base=aio\n' >>"$conf"
	start_tcqd -c "$conf"
}

reinstate_case() {
	pdu_case "$REINSTATE" "$1"
	tcqd_alive
}

CHECKS=(
	@reinstate
	reinstate_case:reinstatement_ends_tasks_in_flight
	reinstate_case:reinstatement_drops_write_waiting_for_data
	reinstate_case:max_connections_is_one
)
run_checks "$@"
