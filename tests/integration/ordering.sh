#!/bin/bash
# Ordering guarantees end to end: tcqd on a `delay` backend (completions
# come back out of order, like a drive with its own queue) is judged by
# tcq-bench order-check. With barrier=drain and barrier=flush SAM-5 holds
# (exit 0); with barrier=ignore ORDERED runs as SIMPLE and the checker
# must report violations (exit 1): the check can fail, and this proves it.
. "$(dirname "$0")/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
[ -x "$BENCH" ] || fail "tcq-bench not built at $BENCH"
DELAY="delay:latency=1ms,dist=exp,parallel=32,seed=7"

for pol in drain flush ignore; do
	make_lun "$TEST_TMP/$pol.img" 16M
	start_tcqd --export "$TEST_TMP/$pol.img" --size 16M \
		--backend "$DELAY" --barrier "$pol"
	rc=0
	run "$BENCH" order-check --count 2000 "$TCQD_URL" || rc=$?
	case $pol in
	drain | flush)
		[ "$rc" -eq 0 ] || fail "barrier=$pol: order-check exit $rc"
		grep -q '^order-check: 0 violations' <<<"$OUT" ||
			fail "barrier=$pol: violations reported"
		ok "barrier=$pol keeps SAM-5 ordering"
		;;
	ignore)
		[ "$rc" -eq 1 ] || fail "barrier=ignore: expected exit 1, got $rc"
		grep -Eq '^order-check: [1-9][0-9]* violations' <<<"$OUT" ||
			fail "barrier=ignore: no violations reported"
		ok "barrier=ignore lets ORDERED tasks be overtaken, and order-check sees it"
		;;
	esac
	stop_tcqd
done
pass
