#!/bin/bash
# tcq-bench's access patterns and fio front door against a live tcqd, seen
# by the target through its recording (tcqctl record start|stop,
# docs/crash-lab.md; the file read here by rec_list, after
# include/tcq/rec_format.h):
#  - --replay: a fio iolog v2, v3 and a blkparse trace arrive at the
#    target in the trace's order; a flush point (sync, blkparse F) is a
#    SYNCHRONIZE CACHE that arrives after every write before it ended; a
#    FUA write (RWBS ..F) arrives with FUA; a trace past the LUN's end is
#    refused before anything is sent; a timed replay lasts at least the
#    trace's span (a lower bound, not a speed);
#  - --dist zoned sends every write into its zone;
#  - --thinktime with blocks counted at issue: never more writes under way
#    at the target than a burst, and the pauses the I/O count says;
#    --depth-low 0: the queue is filled only once it drained;
#  - --job: a fio job file runs as the options it says; an unknown key, a
#    second job and an rw tcq-bench lacks are refused by FILE:LINE; fio's
#    rate (KiB/s) and rate_iops become --rate/--rate-iops, fio's fsync=N a
#    SYNCHRONIZE CACHE after every N writes, tcq-bench's own fua=PCT FUA
#    writes.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$BENCH"
need_built "$TCQCTL"
IQN=iqn.2026-12.io.tcq:access
SOCK=$TEST_TMP/ctl.sock

fixture_access() {
	need_tool python3
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK"
		printf '[target %s]\n[lun %s 0]\n' "$IQN" "$IQN"
		printf 'path = %s\nsize = 64M\ncreate = yes\n' "$TEST_TMP/lun0.img"
	} >"$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
}

ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }

# recorded CMD...: runs CMD (its output in OUT, its status in RC) while
# the LUN records into $TEST_TMP/rec.
recorded() {
	rm -f "$TEST_TMP/rec" "$TEST_TMP/rec.base"
	ctl record start "$IQN/0" "$TEST_TMP/rec" || fail "record start: $OUT"
	RC=0
	run "$@" || RC=$?
	local out=$OUT
	ctl record stop "$IQN/0" || fail "record stop: $OUT"
	OUT=$out
}

# rec_list: the recording's tasks in arrival order, one a line:
# "W LBA BLOCKS [FUA]" for a write, "S" for a SYNCHRONIZE CACHE, each
# followed by "after N" for an S: how many earlier writes had ended
# before it arrived; then "maxq N": the most writes under way at once,
# and "empty_at I...": the writes (numbered from 0 in arrival order) that
# arrived when every earlier write had ended.
rec_list() {
	python3 - "$TEST_TMP/rec" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"TCQREC1\n", "not a recording"
pos = struct.unpack_from("<I", d, 12)[0]
ended, kind, out, under, maxq, empty, nw = set(), {}, [], 0, 0, [], 0
while pos + 16 <= len(d):
    ln, typ = struct.unpack_from("<IB", d, pos)
    body = pos + 16
    if typ == 2:  # REC_ARRIVE
        task, nexus, attr, op, fl, lba, blocks = struct.unpack_from("<QIBBHQI", d, body)
        if fl & 0x02:
            writes = [t for t, k in kind.items() if k == "W"]
            out.append("S after %d of %d" % (len([t for t in writes if t in ended]), len(writes)))
            kind[task] = "S"
        elif fl & 0x01:
            out.append("W %d %d%s" % (lba, blocks, " FUA" if fl & 0x04 else ""))
            kind[task] = "W"
            if under == 0:
                empty.append(nw)
            nw += 1
            under += 1
            maxq = max(maxq, under)
    elif typ == 4:  # REC_DONE
        task = struct.unpack_from("<Q", d, body)[0]
        ended.add(task)
        if kind.get(task) == "W":
            under -= 1
    pos += ln
for line in out:
    print(line)
print("maxq %d" % maxq)
print("empty_at " + " ".join(str(i) for i in empty))
PY
}

# The trace's writes as rec_list prints them, from a v2/v3 iolog.
iolog_expect() {
	awk '$0 ~ / write / { n = NF; printf "W %d %d\n", $(n-1) / 512, $n / 512 }
	     $0 ~ / sync / { print "S" }' "$1"
}

replay_iolog_v2_arrives_in_trace_order() {
	local f=$TEST_TMP/t2.log i off
	{
		echo "fio version 2 iolog"
		echo "/dev/sdx add"
		echo "/dev/sdx open"
		# offsets out of order, sizes mixed, reads between
		for i in 7 3 11 0 5 14 2 9; do
			off=$((i * 65536 + 4096))
			echo "/dev/sdx write $off $((4096 * (i % 3 + 1)))"
			echo "/dev/sdx read $((i * 8192)) 4096"
		done
		echo "/dev/sdx sync 0 0"
		for i in 4 12 1 8 6 13 10 15; do
			echo "/dev/sdx write $((i * 131072)) 8192"
		done
		echo "/dev/sdx close"
	} >"$f"
	recorded "$BENCH" --replay "$f" --replay-no-stall --depth 8 "$TCQD_URL"
	[ "$RC" = 0 ] || fail "replay failed: $OUT"
	grep -q '^replay: .*(fio iolog v2): 25 requests: 8 reads, 16 writes (0 FUA), 1 flush points' <<<"$OUT" ||
		fail "no replay summary: $OUT"
	rec_list >"$TEST_TMP/got"
	iolog_expect "$f" >"$TEST_TMP/want"
	diff <(sed 's/ after.*//' "$TEST_TMP/got" | grep -v '^maxq\|^empty_at') "$TEST_TMP/want" ||
		fail "the target saw another order than the trace's"
	grep -qx 'S after 8 of 8' "$TEST_TMP/got" ||
		fail "the SYNCHRONIZE CACHE arrived before the writes before it ended: $(cat "$TEST_TMP/got")"
	ok "fio iolog v2 at depth 8: 16 writes and the sync arrive in the trace's order; the sync after all 8 earlier writes ended"
}

replay_blkparse_flush_and_fua_kept() {
	local f=$TEST_TMP/blk.txt
	cat >"$f" <<'TXT'
  8,16   0        1     0.000000000  100  Q   W 2048 + 8 [dd]
  8,16   0        2     0.000010000  100  Q  WS 64 + 16 [dd]
  8,16   0        3     0.000020000  100  Q   R 0 + 8 [dd]
  8,16   0        4     0.000030000  100  Q FWFS 4096 + 8 [jbd2/sdb-8]
  8,16   0        5     0.000040000  100  Q   W 512 + 8 [dd]
  8,16   0        6     0.000050000  100  Q FWS [jbd2/sdb-8]
  8,16   0        7     0.000060000  100  Q  WFS 1024 + 8 [dd]
  8,16   0        8     0.000070000  100  Q   D 0 + 64 [fstrim]
CPU0 (8,16):
 Reads Queued:           1,        4KiB  Writes Queued:           5,       24KiB
TXT
	recorded "$BENCH" --replay "$f" --replay-no-stall --depth 4 "$TCQD_URL"
	[ "$RC" = 0 ] || fail "replay failed: $OUT"
	grep -q '1 trims/discards not sent' <<<"$OUT" || fail "the discard is not counted: $OUT"
	rec_list >"$TEST_TMP/got"
	printf '%s\n' "W 2048 8" "W 64 16" "S after 2 of 2" "W 4096 8 FUA" \
		"W 512 8" "S after 4 of 4" "W 1024 8 FUA" >"$TEST_TMP/want"
	diff <(grep -v '^maxq\|^empty_at' "$TEST_TMP/got") "$TEST_TMP/want" ||
		fail "blkparse's flushes and FUA not kept"
	ok "blkparse: the preflush (F first) and the flush alone are SYNCHRONIZE CACHE after the writes before them ended; W..F arrives with FUA; order kept"
}

replay_timed_lasts_the_trace() {
	local f=$TEST_TMP/t3.log secs
	printf '%s\n' "fio version 3 iolog" "0 /dev/sdx add" \
		"0 /dev/sdx open" "0 /dev/sdx write 0 4096" \
		"300000 /dev/sdx write 8192 4096" \
		"600000 /dev/sdx read 0 4096" >"$f"
	run "$BENCH" --replay "$f" --depth 1 "$TCQD_URL" || fail "replay v3: $OUT"
	secs=$(sed -n 's/^replay: depth 1: 3 commands done (0 SYNCHRONIZE CACHE) in \([0-9.]*\) s (the trace spans 0.600 s).*/\1/p' <<<"$OUT")
	[ -n "$secs" ] || fail "no replay line: $OUT"
	# the last I/O goes at 0.6 s from the start, never before
	python3 -c "import sys; sys.exit(0 if float('$secs') >= 0.6 else 1)" ||
		fail "a timed replay of a 0.6 s trace took $secs s"
	ok "fio iolog v3 replayed at its times: $secs s for a 0.6 s trace"
}

replay_past_the_end_refused_before_sending() {
	local f=$TEST_TMP/end.log
	printf '%s\n' "fio version 2 iolog" "/dev/sdx add" \
		"/dev/sdx write 0 4096" "/dev/sdx write 67104768 8192" >"$f"
	recorded "$BENCH" --replay "$f" "$TCQD_URL"
	[ "$RC" = 2 ] || fail "a trace past the end: status $RC, expected 2"
	grep -q "end.log:4: I/O of 8192 bytes at byte 67104768 ends past the LUN's end (67108864 bytes); nothing was sent" <<<"$OUT" ||
		fail "the refusal does not name the line and the end: $OUT"
	[ "$(rec_list | head -1)" = "maxq 0" ] || fail "something was sent: $(rec_list)"
	ok "a trace past the LUN's end is refused naming its line, and nothing reaches the target"
}

dist_zoned_keeps_writes_in_the_zone() {
	recorded "$BENCH" --quiet --rw randwrite --bs 4k --depth 8 --ios 300 \
		--runtime 60 --dist zoned:100/10 "$TCQD_URL"
	[ "$RC" = 0 ] || fail "--dist zoned run failed: $OUT"
	rec_list >"$TEST_TMP/got"
	# 10% of 64 MiB of 512-byte blocks: LBAs below 13107
	awk '$1 == "W" { n++; if ($2 + $3 > 13107) bad++ }
	     END { exit !(n == 300 && !bad) }' "$TEST_TMP/got" ||
		fail "writes outside the zone, or not 300: $(grep -c '^W' "$TEST_TMP/got")"
	ok "--dist zoned:100/10: all 300 writes land in the first 10% of the LUN"
}

thinktime_bursts_seen_by_target() {
	recorded "$BENCH" --quiet --rw randwrite --bs 4k --depth 16 --ios 40 \
		--runtime 60 --thinktime 2ms --thinktime-blocks 4 \
		--thinktime-blocks-type issue "$TCQD_URL"
	[ "$RC" = 0 ] || fail "--thinktime run failed: $OUT"
	# a pause after every 4th of 40 writes but the last: 9
	grep -q '^thinktime: randwrite bs=4K depth=16 sessions=1: 9 pauses, 40 I/Os issued' <<<"$OUT" ||
		fail "not 9 pauses over 40 I/Os: $OUT"
	rec_list >"$TEST_TMP/got"
	grep -qx 'maxq [1-4]' "$TEST_TMP/got" ||
		fail "more writes under way than a burst of 4: $(tail -1 "$TEST_TMP/got")"
	ok "--thinktime 2ms, bursts of 4 at depth 16: 9 pauses over 40 writes, at most 4 under way at the target"
}

depth_low_refills_from_empty() {
	recorded "$BENCH" --quiet --rw randwrite --bs 4k --depth 8 --ios 512 \
		--runtime 60 --depth-low 0 "$TCQD_URL"
	[ "$RC" = 0 ] || fail "--depth-low run failed: $OUT"
	rec_list >"$TEST_TMP/got"
	# full at 8, drained to 0, filled again: writes 8, 16, ..., 504
	# arrive when all before them ended (others may too: a fast target
	# can end one before the next of its burst arrives; without the
	# drain, 63 bursts all starting on an empty queue would be luck)
	tail -1 "$TEST_TMP/got" | awk '{ for (i = 2; i <= NF; i++) e[$i] = 1
		for (k = 8; k < 512; k += 8) if (!(k in e)) exit 1 }' ||
		fail "a burst of 8 began before the one before ended: $(tail -1 "$TEST_TMP/got")"
	ok "--depth 8 --depth-low 0: writes 8, 16, ..., 504 of 512 reach the target only once every write before them ended"
}

job_file_runs_as_its_options() {
	local j=$TEST_TMP/job.fio
	cat >"$j" <<EOF2
; a fio job, as people write them
[global]
bs=4k
iodepth=4
filename=iscsi\\://${TCQD_PORTAL//:/\\:}/$IQN/0

[zones]
rw=randwrite
size=1m
random_distribution=zoned:100/10
randseed=7
ordered=10
EOF2
	recorded "$BENCH" --job "$j" --quiet --json "$TEST_TMP/j.json"
	[ "$RC" = 0 ] || fail "--job run failed: $OUT"
	python3 - "$TEST_TMP/j.json" <<'PY' || fail "the job did not run as its options say"
import json, sys
p = json.load(open(sys.argv[1]))["points"]
assert len(p) == 1, p
p = p[0]
# size=1m of bs=4k: 256 writes, at depth 4, one session
assert (p["rw"], p["bs"], p["depth"], p["sessions"], p["ios"]) == ("randwrite", 4096, 4, 1, 256), p
PY
	rec_list >"$TEST_TMP/got"
	# size=1m is the region: LBAs below 2048; zoned:100/10 of it: 204
	awk '$1 == "W" { n++; if ($2 + $3 > 208) bad++ }
	     END { exit !(n == 256 && !bad) }' "$TEST_TMP/got" ||
		fail "the job's writes are not 256 in its zone"
	ok "a fio job file (global and job sections, escaped filename) runs: 256 writes of 4K at depth 4 in its zone"
}

# fio's rate=800k is 800 KiB/s: 200 writes of 4K a second; rate_iops=150
# is itself. fsync=4: every 4th write is followed by a SYNCHRONIZE CACHE
# (fio's HOWTO); fua=100 (tcq-bench's key): every write has FUA.
job_file_rate_fsync_and_mix_keys() {
	local j=$TEST_TMP/rate.fio key want
	for key in "rate=800k" "rate_iops=150"; do
		printf '[w]\nrw=randwrite\nbs=4k\niodepth=2\nsize=1m\n%s\nfsync=4\nfua=100\nruntime=1\ntime_based\nfilename=%s\n' \
			"$key" "$(sed 's/:/\\:/g' <<<"$TCQD_URL")" >"$j"
		recorded "$BENCH" --job "$j" --quiet --json "$TEST_TMP/r.json"
		[ "$RC" = 0 ] || fail "--job with $key failed: $OUT"
		want=${key#*=}; [ "$want" = 800k ] && want=200
		python3 - "$TEST_TMP/r.json" "$want" <<'PY' || fail "$key did not become the asked rate: $(cat "$TEST_TMP/r.json")"
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
assert abs(p["rate_iops"] - float(sys.argv[2])) < 0.01, p["rate_iops"]
PY
		rec_list >"$TEST_TMP/got"
		# 4 writes (each FUA), a sync, 4 writes, ...; at most the rate's
		# writes in the 1 s run (a count the rate bounds, not a speed)
		awk -v max="$want" '
			$1 == "W" { n++; run++; if ($4 != "FUA") bad = "a write without FUA" }
			$1 == "S" { s++; if (run != 4) bad = "a sync after " run " writes"; run = 0 }
			END { if (!bad && (n < 4 || n > max + 8)) bad = n " writes"
			      if (bad) { print bad; exit 1 } }' "$TEST_TMP/got" ||
			fail "$key fsync=4 fua=100: $(awk -v max="$want" '{print}' "$TEST_TMP/got" | head -12)"
	done
	ok "job keys: rate=800k and rate_iops=150 are the asked rates (200 and 150 IOPS of 4K); fsync=4 sends a SYNCHRONIZE CACHE after every 4 writes; fua=100 makes every write FUA"
}

job_file_refusals_name_file_and_line() {
	local j=$TEST_TMP/bad.fio rc
	printf '[global]\nbs=4k\n[a]\nrw=randread\nioengine=libaio\n' >"$j"
	rc=0
	run "$BENCH" --job "$j" "$TCQD_URL" || rc=$?
	[ "$rc" = 2 ] || fail "unknown key: status $rc"
	grep -q "bad.fio:5: key 'ioengine' is not one tcq-bench takes" <<<"$OUT" ||
		fail "the unknown key is not named: $OUT"
	printf '[a]\nrw=randread\nruntime=1\n[b]\nrw=read\n' >"$j"
	rc=0
	run "$BENCH" --job "$j" "$TCQD_URL" || rc=$?
	{ [ "$rc" = 2 ] && grep -q "bad.fio:4: a second job \[b\]" <<<"$OUT"; } ||
		fail "a second job section taken: $OUT"
	printf '[a]\nrw=readwrite\nruntime=1\n' >"$j"
	rc=0
	run "$BENCH" --job "$j" "$TCQD_URL" || rc=$?
	{ [ "$rc" = 2 ] && grep -q "bad.fio:2: rw=readwrite" <<<"$OUT"; } ||
		fail "rw=readwrite taken: $OUT"
	rc=0
	run "$BENCH" --dist zipf:0 "$TCQD_URL" || rc=$?
	{ [ "$rc" = 2 ] && grep -q "dist zipf:0: zipf's theta must be above 0" <<<"$OUT"; } ||
		fail "--dist zipf:0 taken: $OUT"
	ok "job files: an unknown key, a second job, rw=readwrite refused by file and line; --dist zipf:0 refused"
}

CHECKS=(
	@access
	replay_iolog_v2_arrives_in_trace_order
	replay_blkparse_flush_and_fua_kept
	replay_timed_lasts_the_trace
	replay_past_the_end_refused_before_sending
	dist_zoned_keeps_writes_in_the_zone
	thinktime_bursts_seen_by_target
	depth_low_refills_from_empty
	job_file_runs_as_its_options
	job_file_rate_fsync_and_mix_keys
	job_file_refusals_name_file_and_line
)
run_checks "$@"
