#!/bin/bash
# The cache backend as a power-cut model, driven over iSCSI: after
# "tcqctl crash", a FUA write and a write followed by SYNCHRONIZE CACHE
# survive, a plain write does not; with --write-cache off every write
# survives (WCE=0 makes every write FUA); --barrier flush makes the
# writes before an ORDERED one durable (covered by unit tests of the
# barrier path; here the LUN options are exercised end to end). With
# tcq-bench's verify journal, a read after a crash expects exactly what
# was acknowledged: it fails when the cache dropped acknowledged writes
# (the control), passes when they were flushed, and after tcqd is killed
# with SIGKILL under load and restarted.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$SCSICMD" "$TCQCTL" "$BENCH"
need_tool jq
SOCK=$TEST_TMP/ctl.sock
G=GOOD

# expect LINES CMD...: scsicmd's output must be LINES (one per command).
expect() {
	local want=$1
	shift
	run "$SCSICMD" "$TCQD_URL" "$@" || fail "scsicmd failed"
	[ "$OUT" = "$want" ] || fail "$* gave '$OUT', expected '$want'"
}
goods() { printf "$G%.0s\n" $(seq "$1"); }
crash() {
	run "$TCQCTL" -s "$SOCK" crash 0 || fail "tcqctl crash failed"
}
# cache_lun BACKEND ARGS...: a fresh file through the given cache backend.
cache_lun() {
	local be=$1
	shift
	rm -f "$TEST_TMP/disk.img"
	start_tcqd --ctl "$SOCK" --export "$TEST_TMP/disk.img" --size 16M \
		--backend "$be" "$@"
	[ -f "$TEST_TMP/disk.img" ] || fail "$be did not create the file"
}

# ---- write cache on: only what was made durable survives ----
fixture_wce() {
	cache_lun cache:writeback=0,base=aio --barrier flush --qam restricted
}

wce_writes_readable_before_crash() {
	expect "$(goods 6)" write 0 8 a1 fua write 64 8 b2 nofua \
		write 128 8 c3 nofua read 0 8 a1 read 64 8 b2 read 128 8 c3
	ok "writes acknowledged and readable before the crash"
}

wce_crash_keeps_fua_and_flushed_writes_only() {
	expect "$(goods 5)" write 1000 8 a1 fua write 1064 8 b2 nofua sync \
		write 1128 8 c3 nofua read 1128 8 c3
	crash
	expect "$(goods 3)" read 1000 8 a1 read 1064 8 b2 read 1128 8 00
	ok "after the crash: FUA and flushed writes survived, the unflushed one is gone"
}

# The data is really in the file (the base), not only in memory.
wce_flushed_write_is_in_backing_file() {
	expect "$(goods 2)" write 2064 8 b2 nofua sync
	cmp -s <(dd if="$TEST_TMP/disk.img" bs=512 skip=2064 count=8 2>/dev/null) \
		<(head -c 4096 /dev/zero | tr '\0' '\262') ||
		fail "flushed data not in the backing file"
	ok "flushed data is in the backing file"
}

# ---- write cache off: every write is FUA ----
fixture_wce_off() {
	cache_lun cache:base=aio --write-cache off
}

wce_off_plain_writes_survive_crash() {
	expect "$(goods 2)" write 200 8 d4 nofua write 300 1 e5 nofua
	crash
	expect "$(goods 2)" read 200 8 d4 read 300 1 e5
	ok "--write-cache off: plain writes survive a crash"
}

# ---- under load: two reactors, write-back racing out-of-order I/O ----
fixture_load() {
	cache_lun cache:writeback=2,base=delay:latency=200us,dist=exp,base=aio \
		--threads 2 --barrier flush
}

load_barrier_flush_applied() {
	run "$TCQCTL" -s "$SOCK" luns || fail "tcqctl luns failed"
	grep -q ' barrier flush ' <<<"$OUT" || fail "--barrier flush not applied"
	ok "the LUN runs with barrier flush"
}

load_verified_ordered_load_through_cache() {
	run "$BENCH" --quiet --engine native --sessions 2 --depth 8 --bs 4k,64k \
		--rw randrw --ordered 10 --runtime 1 --span 4M --verify "$TCQD_URL" ||
		fail "verified load through cache over delay failed"
	ok "verified random load (ORDERED with barrier=flush) through the cache"
}

load_sync_then_crash_keeps_every_block() {
	run "$BENCH" --quiet --engine native --sessions 2 --depth 8 --bs 4k \
		--rw randwrite --ordered 10 --runtime 1 --span 4M \
		--verify-journal "$TEST_TMP/j0" "$TCQD_URL" ||
		fail "write load failed"
	expect "$G" sync
	crash
	run "$BENCH" --quiet --engine native --depth 8 --bs 4k --rw read \
		--runtime 1 --span 4M --verify-journal "$TEST_TMP/j0" "$TCQD_URL" ||
		fail "data written and flushed before the crash is damaged"
	ok "after sync and crash every written block is intact"
}

# ---- a verify journal remembers what was acknowledged ----
# (tcq-bench --verify-journal): a plain --verify read after a crash
# expects nothing of blocks it did not write itself, so it cannot see a
# lost write; with the journal, the generations acknowledged by the write
# run are what the read run expects.
fixture_journal() {
	cache_lun cache:writeback=0,base=aio
}
# jbench JOURNAL RW: a 1 s verified 4K load on the first MiB.
jbench() {
	run "$BENCH" --quiet --engine native --depth 8 --bs 4k --rw "$2" \
		--runtime 1 --span 1M --verify-journal "$1" "$TCQD_URL"
}

journal_catches_lost_acknowledged_writes() {
	jbench "$TEST_TMP/j1" randwrite || fail "write load failed"
	crash	# the cache drops every write it had not made durable
	if jbench "$TEST_TMP/j1" read; then
		fail "the journal read passed although the crash dropped acknowledged writes"
	fi
	grep -Eq 'verify mismatches|stale|not stamped' <<<"$OUT" ||
		fail "the failure does not name the verify mismatches"
	ok "after a crash without a flush, the journal read fails on the lost writes"
}

journal_passes_when_the_writes_were_flushed() {
	jbench "$TEST_TMP/j2" randwrite || fail "write load failed"
	expect "$G" sync
	crash
	jbench "$TEST_TMP/j2" read ||
		fail "flushed writes did not read back as the journal expects"
	ok "after sync and crash the journal read finds every acknowledged write"
}

journal_of_another_region_refused() {
	if run "$BENCH" --quiet --engine native --depth 1 --bs 4k --rw read \
		--runtime 1 --span 2M --verify-journal "$TEST_TMP/j2" "$TCQD_URL"; then
		fail "a journal of another region was used"
	fi
	grep -q "not a journal of this region" <<<"$OUT" ||
		fail "the refusal does not say why"
	ok "a journal kept for another region is refused, naming the file"
}

# ---- SIGKILL under a verified load: acknowledged writes are in the file ----
# With the aio backend an acknowledged write is in the kernel (O_DIRECT,
# or the page cache with write_cache=on), so killing tcqd loses none.
kill9_keeps_every_acknowledged_write() {
	rm -f "$TEST_TMP/k.img"
	start_tcqd --export "$TEST_TMP/k.img" --size 16M --write-cache on \
		--ctl "$SOCK"
	"$BENCH" --quiet --engine native --depth 16 --bs 4k --rw randwrite \
		--runtime 3 --span 4M --verify-journal "$TEST_TMP/j3" "$TCQD_URL" \
		>"$TEST_TMP/kill9.out" 2>&1 &
	local bench=$!
	wait_logins 1	# then writes acknowledged, more in flight
	wait_load_running "$SOCK" 500
	# SIGKILL on purpose: the crash whose losses this check counts. The
	# restarted tcqd is ended with SIGTERM (check_exit).
	kill -KILL "$TCQD_PID"
	wait "$TCQD_PID" 2>/dev/null
	TCQD_PID=
	wait "$bench"	# it stops: its session is gone
	grep -q 'errors:' "$TEST_TMP/kill9.out" ||
		fail "tcq-bench did not notice the kill: $(tail -3 "$TEST_TMP/kill9.out")"
	start_tcqd --export "$TEST_TMP/k.img" --size 16M
	run "$BENCH" --quiet --engine native --depth 8 --bs 4k --rw read \
		--runtime 1 --span 4M --verify-journal "$TEST_TMP/j3" "$TCQD_URL" ||
		fail "after SIGKILL and a restart, acknowledged writes are missing"
	ok "after SIGKILL under load and a restart, every acknowledged write reads back"
}

# ---- crash on a LUN that has no cache is refused ----
fixture_ram() {
	start_tcqd --ctl "$SOCK" --backend ram:size=1M --export ram0
}

ram_crash_refused_without_cache() {
	if run "$TCQCTL" -s "$SOCK" crash 0; then
		fail "crash on a ram LUN succeeded"
	fi
	grep -qF "crash: the LUN's backend is not 'cache'" <<<"$OUT" ||
		fail "no reason given"
	ok "crash is refused on a LUN without a cache backend, with the reason"
}

CHECKS=(
	@wce
	wce_writes_readable_before_crash
	wce_crash_keeps_fua_and_flushed_writes_only
	wce_flushed_write_is_in_backing_file
	@wce_off
	wce_off_plain_writes_survive_crash
	@load
	load_barrier_flush_applied
	load_verified_ordered_load_through_cache
	load_sync_then_crash_keeps_every_block
	@journal
	journal_catches_lost_acknowledged_writes
	journal_passes_when_the_writes_were_flushed
	journal_of_another_region_refused
	@ram
	ram_crash_refused_without_cache
	@
	kill9_keeps_every_acknowledged_write
)
run_checks "$@"
