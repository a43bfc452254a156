#!/bin/bash
# tcq-bench's SCSI command mixes (--fua, --sync-every, --sync-interval,
# --unmap, --write-same, --write-same-unmap, --caw, --xcopy) against a
# live tcqd, judged by what the target saw: the LUN records (tcqctl record
# start/stop, the crash lab's recording of every command that writes,
# flushes or is ORDERED, with its opcode and FUA flag), and
# tests/integration/reclist lists the recording. A fixed seed and --ios
# give an exact number of commands; a share drawn per command is a
# binomial count, and each is held to its mean n*p within 4 standard
# deviations (4 * sqrt(n*p*(1-p))): a correct run fails that by chance
# less than once in 15000. What tcq-bench reports of each kind must be
# exactly what the target recorded.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
RECLIST=$top_builddir/tests/integration/reclist
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$BENCH" "$RECLIST" "$TCQCTL"
SOCK=$TEST_TMP/ctl.sock

fixture_mix() { start_tcqd --ctl "$SOCK"; }

# record NAME BENCH-ARGS...: tcq-bench (JSON into $TEST_TMP/NAME.json)
# while the LUN records into $TEST_TMP/NAME.rec; the records listed in
# $TEST_TMP/NAME.txt; tcq-bench's output in $BENCH_OUT.
record() {
	local name=$1
	shift
	rm -f "$TEST_TMP/$name.rec"*
	run "$TCQCTL" -s "$SOCK" record start "$TCQD_IQN/$TCQD_LUN" \
		"$TEST_TMP/$name.rec" || fail "record start: $OUT"
	run "$BENCH" --quiet --json "$TEST_TMP/$name.json" "$@" "$TCQD_URL" ||
		fail "tcq-bench $*: $OUT"
	BENCH_OUT=$OUT
	run "$TCQCTL" -s "$SOCK" record stop "$TCQD_IQN/$TCQD_LUN" ||
		fail "record stop: $OUT"
	"$RECLIST" "$TEST_TMP/$name.rec" >"$TEST_TMP/$name.txt" ||
		fail "reclist $name.rec failed"
}

# kind NAME KIND FIELD: a kind's count (or miscompares) in NAME's JSON.
kind() {
	jq -r ".points[0].kinds[\"$2\"].$3 // 0" "$TEST_TMP/$1.json"
}

# within COUNT N PCT WHAT: COUNT of N draws of PCT % within 4 sd.
within() {
	awk -v c="$1" -v n="$2" -v p="$3" 'BEGIN {
		p /= 100; m = n * p; t = 4 * sqrt(n * p * (1 - p))
		exit !(c >= m - t && c <= m + t) }' ||
		fail "$4: $1 of $2, not within 4 sd of $3 %"
}

# SBC-3: WRITE(10) 2Ah, WRITE(16) 8Ah; FUA is REC_A_FUA (04h) of arrive.
mix_fua_share_as_the_target_sees_it() {
	need_tool jq
	local w f
	record fua --rw randwrite --bs 4k --depth 8 --fua 25 --ios 2000 \
		--seed 7 --runtime 60
	w=$(awk '$1 == "arrive" && ($3 == "2a" || $3 == "8a")' "$TEST_TMP/fua.txt" | wc -l)
	# REC_A_FUA 04h: the flags' last hex digit is 4-7 or c-f
	f=$(awk '$1 == "arrive" && ($3 == "2a" || $3 == "8a") &&
		substr($5, length($5)) ~ /[4567cdef]/' "$TEST_TMP/fua.txt" | wc -l)
	[ "$w" = 2000 ] || fail "the target saw $w WRITEs, not the 2000 of --ios"
	within "$f" 2000 25 "FUA writes"
	[ "$(kind fua fua count)" = "$f" ] ||
		fail "tcq-bench reports $(kind fua fua count) FUA writes, the target saw $f"
	[ "$(kind fua write count)" = "$((w - f))" ] ||
		fail "tcq-bench reports $(kind fua write count) plain writes, the target saw $((w - f))"
	ok "--fua 25: $f of 2000 WRITEs carried FUA at the target (500 +- 78), as tcq-bench reports"
}

# SYNCHRONIZE CACHE(16) is 91h. One session's commands reach the task
# set in CmdSN order, so the recording shows the session's own sequence:
# 1100 commands are 100 times 10 writes then a SYNCHRONIZE CACHE.
mix_sync_every_ten_writes() {
	need_tool jq
	local seq
	record every --rw randwrite --bs 4k --depth 8 --sync-every 10 \
		--ios 1100 --runtime 60
	seq=$(awk '$1 == "arrive" { printf "%s", ($3 == "91" ? "S" : "w") }' \
		"$TEST_TMP/every.txt")
	[ "$seq" = "$(printf 'wwwwwwwwwwS%.0s' $(seq 100))" ] ||
		fail "not 100 x (10 writes, SYNCHRONIZE CACHE): ${seq:0:200}"
	[ "$(kind every sync count)" = 100 ] ||
		fail "tcq-bench reports $(kind every sync count) syncs, not 100"
	ok "--sync-every 10: the target saw 100 x (10 WRITEs, SYNCHRONIZE CACHE(16))"
}

# At most one SYNCHRONIZE CACHE per interval per session, the first one
# interval after the start: over R seconds at most R / 0.1; at least one.
mix_sync_interval_at_most_one_per_interval() {
	need_tool jq
	local s r
	record interval --rw randwrite --bs 4k --depth 4 --sync-interval 100 \
		--runtime 1
	s=$(awk '$1 == "arrive" && $3 == "91"' "$TEST_TMP/interval.txt" | wc -l)
	r=$(jq '.points[0].runtime_s' "$TEST_TMP/interval.json")
	awk -v s="$s" -v r="$r" 'BEGIN { exit !(s >= 1 && s <= int(r * 10) + 1) }' ||
		fail "$s SYNCHRONIZE CACHEs in $r s at one per 100 ms"
	[ "$(kind interval sync count)" = "$s" ] ||
		fail "tcq-bench reports $(kind interval sync count) syncs, the target saw $s"
	ok "--sync-interval 100: $s SYNCHRONIZE CACHE(16) in $r s, as tcq-bench reports"
}

# kinds_seen NAME N "OP:KIND ...": each KIND (its opcode OP; "ws" and
# "ws-unmap" for 93h) counted in NAME's recording, within 4 sd of 10 % of
# N and exactly as NAME's JSON reports; MISC: the CAW miscompares, once
# tcq-bench counts as many as the target answered. (Not called in $(...):
# a fail there would end only the subshell.)
kinds_seen() {
	local t="$TEST_TMP/$1.txt" c op name
	awk '$1 == "arrive" { op[$2] = $3 }
	     $1 == "write" && $3 == 3 { un[$2] = 1 }
	     END { for (k in op) { o = op[k]
		if (o == "93") o = un[k] ? "ws-unmap" : "ws"
		print o } }' "$t" | sort | uniq -c >"$TEST_TMP/$1.count"
	cat "$TEST_TMP/$1.count"
	for op in $3; do
		name=${op#*:}
		c=$(awk -v o="${op%%:*}" '$2 == o { print $1 }' "$TEST_TMP/$1.count")
		within "${c:-0}" "$2" 10 "$name"
		[ "$(kind "$1" "$name" count)" = "${c:-0}" ] ||
			fail "tcq-bench reports $(kind "$1" "$name" count) $name, the target saw ${c:-0}"
	done
	# a CAW that miscompared ended CHECK CONDITION, MISCOMPARE (0Eh),
	# MISCOMPARE DURING VERIFY OPERATION (1D00h): counted apart
	MISC=$(awk '$1 == "arrive" && $3 == "89" { caw[$2] = 1 }
		$1 == "done" && caw[$2] && $4 == "e" && $5 == "1d00"' "$t" | wc -l)
	[ "$(kind "$1" caw miscompares)" = "$MISC" ] ||
		fail "tcq-bench reports $(kind "$1" caw miscompares) miscompares, the target $MISC"
}

# UNMAP 42h, WRITE SAME(16) 93h (with UNMAP=1 its blocks are recorded
# deallocated: REC_W_UNMAP, 3), COMPARE AND WRITE 89h, EXTENDED COPY 83h:
# 10 % each of 3000 commands, the other 50 % WRITEs.
mix_unmap_write_same_caw_xcopy_shares() {
	need_tool jq
	record kinds --rw randwrite --bs 4k --depth 8 --unmap 10 \
		--write-same 10 --write-same-unmap 10 --caw 10 --xcopy 10 \
		--ios 3000 --seed 3 --runtime 60
	grep -q '^Command kinds' <<<"$BENCH_OUT" || fail "no table of command kinds"
	[ "$(jq '.points[0].errors' "$TEST_TMP/kinds.json")" = 0 ] ||
		fail "errors in the mix"
	kinds_seen kinds 3000 "42:unmap ws:ws ws-unmap:ws-unmap 89:caw 83:xcopy"
	ok "--unmap/--write-same/--write-same-unmap/--caw/--xcopy 10 each of 3000: the target's counts within 300 +- 66, as tcq-bench reports ($MISC miscompares)"
}

# The libiscsi engine sends them through libiscsi's own calls (all but
# EXTENDED COPY): the same shares at the target. --fua is a share of the
# 2000 or so plain WRITEs: binomial over the count the target saw.
mix_libiscsi_engine_sends_them_too() {
	need_tool jq
	local w f
	record lis --engine libiscsi --rw randwrite --bs 4k --depth 8 \
		--fua 25 --unmap 10 --write-same 10 --write-same-unmap 10 \
		--caw 10 --ios 3000 --seed 5 --runtime 60
	[ "$(jq '.points[0].errors' "$TEST_TMP/lis.json")" = 0 ] ||
		fail "errors in the libiscsi mix"
	kinds_seen lis 3000 "42:unmap ws:ws ws-unmap:ws-unmap 89:caw"
	w=$(awk '$1 == "arrive" && ($3 == "2a" || $3 == "8a")' "$TEST_TMP/lis.txt" | wc -l)
	f=$(awk '$1 == "arrive" && ($3 == "2a" || $3 == "8a") &&
		substr($5, length($5)) ~ /[4567cdef]/' "$TEST_TMP/lis.txt" | wc -l)
	within "$f" "$w" 25 "libiscsi FUA writes"
	[ "$(kind lis fua count)" = "$f" ] ||
		fail "tcq-bench reports $(kind lis fua count) FUA writes, the target saw $f"
	ok "libiscsi engine: FUA on $f of $w WRITEs, UNMAP, WRITE SAME (both), CAW at 10 % each of 3000 as the target saw them ($MISC miscompares)"
}

mix_options_refused_where_they_cannot_run() {
	make_lun "$TEST_TMP/local.img" 8M
	run "$BENCH" --quiet --engine local --rw randwrite --caw 10 --runtime 0.2 \
		--depth 1 "$TEST_TMP/local.img" && fail "local engine took --caw"
	grep -q 'the local engine cannot send --caw (COMPARE AND WRITE)' <<<"$OUT" ||
		fail "local --caw: $OUT"
	run "$BENCH" --quiet --engine libiscsi --rw randwrite --xcopy 10 \
		--runtime 0.2 --depth 1 "$TCQD_URL" && fail "libiscsi engine took --xcopy"
	grep -q 'the libiscsi engine cannot send --xcopy (EXTENDED COPY)' <<<"$OUT" ||
		fail "libiscsi --xcopy: $OUT"
	run "$BENCH" --verify --unmap 5 "$TCQD_URL" && fail "--verify --unmap taken"
	grep -q 'cannot run with --unmap' <<<"$OUT" || fail "--verify --unmap: $OUT"
	run "$BENCH" --unmap 60 --caw 50 "$TCQD_URL" && fail "shares over 100 % taken"
	grep -q 'exceed 100%' <<<"$OUT" || fail "shares over 100 %: $OUT"
	run "$BENCH" --rw journal --fua 5 "$TCQD_URL" && fail "--rw journal --fua taken"
	grep -q 'do not apply to it' <<<"$OUT" || fail "journal --fua: $OUT"
	run "$BENCH" --fua 101 "$TCQD_URL" && fail "--fua 101 taken"
	grep -q "bad value for --fua: '101'" <<<"$OUT" || fail "--fua 101: $OUT"
	run "$BENCH" --sync-every 0 "$TCQD_URL" && fail "--sync-every 0 taken"
	grep -q "bad value for --sync-every: '0'" <<<"$OUT" || fail "--sync-every 0: $OUT"
	ok "engines without the commands, --verify, journal and bad values refused by name"
}

CHECKS=(
	@mix
	mix_fua_share_as_the_target_sees_it
	mix_sync_every_ten_writes
	mix_sync_interval_at_most_one_per_interval
	mix_unmap_write_same_caw_xcopy_shares
	mix_libiscsi_engine_sends_them_too
	mix_options_refused_where_they_cannot_run
)
run_checks "$@"
