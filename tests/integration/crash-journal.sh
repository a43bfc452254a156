#!/bin/bash
# The crash lab on a workload that needs barriers: tcq-bench --rw journal
# (transactions of log blocks, then a commit block ordered by --commit) on
# a LUN that records, then tcq-crash check with tcq-bench --check-journal
# on every crash state. The table it must give (failing states):
#   --commit ordered, write cache on:  some under sbc, none under ordered
#   --commit flush:                    none under sbc or ordered
#   --commit ordered, write cache off: none under sbc
#   --commit none:                     some under sbc and under ordered
# The LUN's file holds a journal before tcqd starts (an earlier run through
# the local engine), so the state where nothing new is durable has a
# layout to judge, as a disk that was in use would.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

CRASH=${CRASH:-$top_builddir/tcq-crash}
BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$CRASH" "$BENCH"
IQN=iqn.2026-11.org.tcq:journal
# 8 slots of 4 log blocks and a commit, 4K each: slots are reused
JOURNAL=(--bs 4k --journal-blocks 4 --span 160k --depth 4)
TXNS=${JOURNAL_TXNS:-24}

# journal_recorded COMMIT WRITE_CACHE: a fresh 16 MiB LUN whose file holds
# a journal, recorded while tcq-bench runs TXNS transactions on it.
journal_recorded() {
	local commit=$1 wc=$2
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	truncate -s 16M "$TEST_TMP/lun0.img"
	run "$BENCH" --quiet --engine local --buffered --rw journal \
		--commit none "${JOURNAL[@]}" --ios 8 "$TEST_TMP/lun0.img" ||
		fail "formatting the journal: $OUT"
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf '[target %s]\n[lun %s 0]\n' "$IQN" "$IQN"
		printf 'path = %s\nsize = 16M\nblock_size = 512\n' "$TEST_TMP/lun0.img"
		printf 'record = %s\nwrite_cache = %s\n' "$TEST_TMP/rec" "$wc"
	} >"$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	run "$BENCH" --quiet --rw journal --commit "$commit" "${JOURNAL[@]}" \
		--ios "$TXNS" --runtime 20 "$TCQD_URL" ||
		fail "tcq-bench --rw journal --commit $commit: $OUT"
	grep -q "^journal: $TXNS transactions committed" <<<"$OUT" ||
		fail "not $TXNS transactions: $OUT"
	stop_tcqd
	# everything written: every transaction complete
	run "$CRASH" image "$TEST_TMP/rec" all "$TEST_TMP/all.img" || fail "image"
	run "$BENCH" --check-journal "$TEST_TMP/all.img" ||
		fail "the state 'everything written' is not a complete journal: $OUT"
}

# failing MODEL: the number of failing states of the recording (in FAILING)
# and the states checked (in STATES).
failing() {
	run "$CRASH" check "$TEST_TMP/rec" --model "$1" --max 300 \
		--no-minimize --workdir "$TEST_TMP" \
		--cmd "$BENCH --check-journal {image}"
	FAILING=$(sed -n 's/.* checked at .* point.*, \([0-9]*\) failing.*/\1/p' <<<"$OUT")
	STATES=$(sed -n 's/^\([0-9]*\) states checked.*/\1/p' <<<"$OUT")
	[ -n "$FAILING" ] && [ -n "$STATES" ] || fail "tcq-crash check: $OUT"
	say "--model $1: $FAILING of $STATES states fail"
}

ordered_commit_with_cache_needs_the_ordered_model() {
	journal_recorded ordered on
	failing sbc
	[ "$FAILING" -gt 0 ] ||
		fail "--commit ordered, cache on, --model sbc: no failing state of $STATES"
	failing ordered
	[ "$FAILING" = 0 ] ||
		fail "--commit ordered, --model ordered: $FAILING of $STATES states fail"
	ok "--commit ordered with the write cache on: failing states under sbc, none under ordered"
}

flush_commit_holds_under_both_models() {
	journal_recorded flush on
	failing sbc
	[ "$FAILING" = 0 ] || fail "--commit flush, --model sbc: $FAILING of $STATES fail"
	failing ordered
	[ "$FAILING" = 0 ] || fail "--commit flush, --model ordered: $FAILING of $STATES fail"
	ok "--commit flush: no failing state under sbc or ordered"
}

ordered_commit_without_cache_holds() {
	journal_recorded ordered off
	failing sbc
	[ "$FAILING" = 0 ] ||
		fail "--commit ordered, write cache off, --model sbc: $FAILING of $STATES fail"
	ok "--commit ordered with the write cache off: no failing state under sbc"
}

no_commit_order_fails_under_both_models() {
	journal_recorded none on
	failing sbc
	[ "$FAILING" -gt 0 ] || fail "--commit none, --model sbc: no failing state of $STATES"
	failing ordered
	[ "$FAILING" -gt 0 ] || fail "--commit none, --model ordered: no failing state of $STATES"
	ok "--commit none: failing states under sbc and under ordered"
}

CHECKS=(
	ordered_commit_with_cache_needs_the_ordered_model
	flush_commit_holds_under_both_models
	ordered_commit_without_cache_holds
	no_commit_order_fails_under_both_models
)
run_checks "$@"
