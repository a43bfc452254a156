#!/bin/bash
# Ordering guarantees end to end: tcqd on a `delay` backend (completions
# come back out of order, like a drive with its own queue) is judged by
# tcq-bench order-check. With barrier=drain and barrier=flush SAM-5 holds
# (exit 0); with barrier=ignore ORDERED runs as SIMPLE and the checker
# must report violations (exit 1): the check can fail, and this proves it.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$BENCH"
DELAY="delay:latency=1ms,dist=exp,parallel=32,seed=7"

# barrier POLICY: tcqd on the delay backend with that policy.
barrier() {
	make_lun "$TEST_TMP/$1.img" 16M
	start_tcqd --export "$TEST_TMP/$1.img" --size 16M \
		--backend "$DELAY" --barrier "$1"
}
fixture_drain() { barrier drain; }
fixture_flush() { barrier flush; }
fixture_ignore() { barrier ignore; }

barrier_drain_keeps_sam5_order() { order_check_clean "$TCQD_URL"; }
barrier_flush_keeps_sam5_order() { order_check_clean "$TCQD_URL"; }

barrier_ignore_violations_seen_by_order_check() {
	local rc=0
	run "$BENCH" order-check --count 2000 "$TCQD_URL" || rc=$?
	[ "$rc" -eq 1 ] || fail "expected exit 1, got $rc"
	grep -Eq '^order-check: [1-9][0-9]* violations' <<<"$OUT" ||
		fail "no violations reported"
	ok "barrier=ignore lets ORDERED tasks be overtaken, and order-check sees it"
}

CHECKS=(
	@drain
	barrier_drain_keeps_sam5_order
	@flush
	barrier_flush_keeps_sam5_order
	@ignore
	barrier_ignore_violations_seen_by_order_check
)
run_checks "$@"
