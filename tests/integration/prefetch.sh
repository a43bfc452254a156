#!/bin/bash
# Sequential prefetch (prefetch, prefetch_max; tcqd.conf(5)) on a live
# tcqd with a file LUN (prefetch = auto: aio reads it O_DIRECT): a
# sequential reader with a writer racing it over the ranges read ahead,
# on two sessions (two reactors), never reads stale data (pfrace checks
# every read against the write that preceded it), and the read-ahead was
# really used and really dropped by those writes (tcqctl stats and the
# metrics count its hits and dropped bytes); tcq-bench --verify writes
# then reads the LUN back sequentially, clean; order-check keeps SAM-5
# order with prefetch on; set live, off frees its buffers and stops its
# hits, tcqctl config (what save writes) keeps it; a bad value is refused
# by its key's name and changes nothing.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
PFRACE=${PFRACE:-$top_builddir/tests/integration/pfrace}
need_built "$TCQCTL" "$BENCH" "$PFRACE"
need_tool jq

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:prefetch

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }

# pf_read: LUN 0's prefetch object from tcqctl stats --json, into PF.
# pf FIELD: its FIELD as of that read (true and false as such; "null"
# when it has none, which no check accepts).
PF=
pf_read() {
	PF=$(tc "$TCQCTL" --ctl "$SOCK" --json stats) ||
		fail "tcqctl stats failed: $PF"
	PF=$(jq -c '.luns[0].prefetch' <<<"$PF")
}
pf() { jq -r ".$1 | tostring" <<<"$PF"; }

fixture_file() {
	tcqd_conf "$CONF" "$T" 16M "ctl = $SOCK"
	printf 'prefetch = auto\nprefetch_max = 4M\n' >>"$CONF"
	start_tcqd -c "$CONF"
}

auto_is_on_for_an_o_direct_file() {
	pf_read
	[ "$(pf on)" = true ] || fail "prefetch is not on"
	[ "$(pf max)" -eq $((4 << 20)) ] || fail "prefetch max is not 4M"
	ok "prefetch = auto is on for the file LUN, max 4M"
}

# 48 chunks of 64 KiB read in order twice, a chunk 1-4 ahead overwritten
# after each read.
racing_writer_never_reads_stale() {
	local h0 d0
	pf_read
	h0=$(pf hits) d0=$(pf bytes_dropped)
	run "$PFRACE" "$TCQD_URL" 48 2 || fail "pfrace: $OUT"
	grep -qxE "reads 96 writes 9[0-9] stale 0" <<<"$OUT" ||
		fail "pfrace: $OUT"
	pf_read
	[ "$(pf hits)" -gt "$h0" ] || fail "no read was served from the read-ahead"
	[ "$(pf bytes_dropped)" -gt "$d0" ] ||
		fail "no write dropped a read-ahead: the race never happened"
	ok "$OUT: none stale; hits $(pf hits), dropped $(pf bytes_dropped) B"
}

metrics_count_prefetch() {
	ctl metrics || fail "tcqctl metrics failed: $OUT"
	grep -qE "^tcq_lun_prefetch_hits_total\{target=\"$T\",lun=\"0\"\} [1-9][0-9]*\$" <<<"$OUT" ||
		fail "no prefetch hits in the metrics: $(grep prefetch <<<"$OUT")"
	grep -qE "^tcq_lun_prefetch_dropped_bytes_total\{target=\"$T\",lun=\"0\"\} [1-9][0-9]*\$" <<<"$OUT" ||
		fail "no dropped bytes in the metrics: $(grep prefetch <<<"$OUT")"
	ok "tcq_lun_prefetch_hits_total and _dropped_bytes_total count them"
}

verify_sequential_write_then_read() {
	local h0
	pf_read
	h0=$(pf hits)
	run "$BENCH" --quiet --ramp 0 --rw write,read --bs 128k --depth 4 \
		--ios 96 --span 12M --verify "$TCQD_URL" ||
		fail "tcq-bench --verify failed: $OUT"
	pf_read
	[ "$(pf hits)" -gt "$h0" ] || fail "the sequential read had no hit"
	ok "tcq-bench --verify 128K write then read at depth 4: clean, with hits"
}

set_off_frees_and_stops_hits() {
	local h0
	ctl set 0 prefetch=off || fail "tcqctl set prefetch=off failed: $OUT"
	pf_read
	[ "$(pf on)" = false ] || fail "prefetch still on"
	[ "$(pf held)" -eq 0 ] || fail "buffers still held"
	h0=$(pf hits)
	run "$BENCH" --quiet --ramp 0 --rw read --bs 64k --depth 1 --ios 64 \
		"$TCQD_URL" || fail "tcq-bench failed: $OUT"
	pf_read
	[ "$(pf hits)" -eq "$h0" ] || fail "hits grew while off"
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config failed"
	grep -qx 'prefetch = off' <<<"$OUT" || fail "config lacks prefetch = off"
	ok "prefetch=off live: buffers freed, no hit since, config keeps it"
}

bad_prefetch_max_refused() {
	local rc=0
	ctl set 0 prefetch=auto prefetch_max=32K || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl set prefetch_max=32K: status $rc"
	[[ $OUT == *prefetch_max* ]] || fail "message lacks prefetch_max: $OUT"
	pf_read
	[ "$(pf on)" = false ] || fail "prefetch changed"
	ok "prefetch_max=32K refused by name, prefetch left off"
}

order_check_with_prefetch_on() {
	pf_read
	[ "$(pf on)" = true ] || fail "prefetch is not on"
	run "$top_builddir/tcq-bench" order-check --count 500 "$TCQD_URL" ||
		fail "order-check exit status $?"
	grep -q '^order-check: 0 violations' <<<"$OUT" ||
		fail "order-check did not report 0 violations"
	ok "order-check: 0 violations with prefetch on"
}

CHECKS=(
	@file
	auto_is_on_for_an_o_direct_file
	racing_writer_never_reads_stale
	metrics_count_prefetch
	verify_sequential_write_then_read
	order_check_with_prefetch_on
	set_off_frees_and_stops_hits
	bad_prefetch_max_refused
)
run_checks "$@"
