#!/bin/bash
# The crash lab end to end (docs/crash-lab.md): a tcqd LUN that records
# (record = FILE) driven by real clients, then tcq-crash and the crash
# backend on what it recorded.
#  - The recording is faithful: libiscsi's own tests of WRITE, WRITE SAME
#    (with UNMAP), UNMAP, COMPARE AND WRITE (a miscompare among them),
#    ORWRITE, WRITE ATOMIC and EXTENDED COPY, then a verified tcq-bench
#    load, leave a recording whose "everything written" state is the LUN's
#    file byte for byte, and every opcode is in it.
#  - The model at work on a sequence of known writes (scsicmd): A, a
#    SYNCHRONIZE CACHE, then B: A is durable (every state keeps it), B is
#    in doubt, and a checker that wants B fails on exactly one state,
#    shrunk to "B dropped"; with flush = ignore the sync promises nothing.
#  - A state served over iSCSI by the crash backend reads back as
#    tcq-crash image writes it.
#  - Bad input: a truncated or corrupt recording, an unknown state, and a
#    crash LUN of another size are refused, naming what is wrong.
#  - A full recording (record_max) ends, says so, and the LUN serves on:
#    a verified load loses nothing.
#  - Writes larger than the recorder's ring at start (4 MiB), four at
#    once: the ring grows, and the recording replays to the LUN.
#  - tcqctl record start under a write load (the LUN held still while its
#    base is copied) and record stop leave a recording that replays to the
#    LUN; mark, stats and metrics show it; bad requests are refused.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

CRASH=${CRASH:-$top_builddir/tcq-crash}
BENCH=${BENCH:-$top_builddir/tcq-bench}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$CRASH" "$BENCH" "$SCSICMD" "$TCQCTL"
need_tool iscsi-test-cu qemu-img jq
IQN=iqn.2026-11.org.tcq:crash
SOCK=$TEST_TMP/ctl.sock

# crash_conf FILE EXTRA...: a 16 MiB thin LUN that records into rec.
crash_conf() {
	local f=$1
	shift
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf '[target %s]\n[lun %s 0]\n' "$IQN" "$IQN"
		printf 'path = %s\nsize = 16M\ncreate = yes\n' "$TEST_TMP/lun0.img"
		printf 'record = %s\n' "$TEST_TMP/rec"
		printf '%s\n' "$@"
	} >"$f"
}

recording_replays_to_the_lun() {
	local t opcodes
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	crash_conf "$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	for t in SCSI.Write10.Simple SCSI.WriteSame10.Simple \
		SCSI.WriteSame16.Unmap SCSI.Unmap.Simple \
		SCSI.CompareAndWrite.Simple SCSI.CompareAndWrite.Miscompare \
		SCSI.OrWrite.Simple SCSI.WriteAtomic16.Simple \
		SCSI.ExtendedCopy.Simple; do
		# their verdicts are conformance.sh's; here only what they write
		tc iscsi-test-cu --dataloss -t "$t" "$TCQD_URL" >/dev/null 2>&1
	done
	run "$BENCH" --quiet --rw randwrite,read --bs 4k,64k --depth 8 \
		--runtime 1 --verify "$TCQD_URL" || fail "tcq-bench: $OUT"
	stop_tcqd
	run "$CRASH" info "$TEST_TMP/rec" || fail "tcq-crash info failed"
	grep -q '^end: stopped' <<<"$OUT" || fail "no REC_END stopped: $OUT"
	opcodes=$(grep '^opcodes:' <<<"$OUT")
	# WRITE(10) 2a, WRITE SAME(10) 41, WRITE SAME(16) 93, UNMAP 42,
	# COMPARE AND WRITE 89, ORWRITE 8b, WRITE ATOMIC(16) 9c, EXTENDED
	# COPY 83, WRITE(16) 8a (tcq-bench)
	for t in 2a 41 93 42 89 8b 9c 83 8a; do
		grep -q "0x$t x" <<<"$opcodes" || fail "opcode 0x$t not recorded: $opcodes"
	done
	run "$CRASH" image "$TEST_TMP/rec" all "$TEST_TMP/all.img" ||
		fail "tcq-crash image failed"
	cmp "$TEST_TMP/all.img" "$TEST_TMP/lun0.img" ||
		fail "the state 'everything written' differs from the LUN's file"
	ok "every command kind recorded; replayed, the recording is the LUN byte for byte"
}

# scsicmd's writes: A (0xaa at LBA 100), SYNCHRONIZE CACHE, B (0xbb at
# LBA 200), then a mark.
known_sequence() {
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	crash_conf "$TEST_TMP/tcqd.conf" "$@"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	run "$SCSICMD" "$TCQD_URL" write 100 1 aa nofua sync write 200 1 bb nofua ||
		fail "scsicmd: $OUT"
	[ "$(grep -c '^GOOD' <<<"$OUT")" = 3 ] || fail "not GOOD: $OUT"
	stop_tcqd
}

# block_of HEX: 512 bytes of that byte.
block_of() {
	local i
	for ((i = 0; i < 512; i++)); do printf "\\x$1"; done
}

# has_block IMAGE LBA HEX: the block holds that byte throughout.
has_block() {
	cmp -s -n 512 -i "$(($2 * 512)):0" "$1" <(block_of "$3")
}

sync_makes_a_durable_and_b_in_doubt() {
	known_sequence
	run "$CRASH" states "$TEST_TMP/rec" || fail "tcq-crash states failed"
	grep -q '1 blocks in doubt from 1 writes' <<<"$OUT" ||
		fail "expected exactly B's block in doubt"
	grep -q '^2 states' <<<"$OUT" || fail "expected 2 states (B or not)"
	# A is in every state; a checker for it never fails
	block_of aa >"$TEST_TMP/a.blk"
	block_of bb >"$TEST_TMP/b.blk"
	run "$CRASH" check "$TEST_TMP/rec" \
		--cmd "cmp -s -n 512 -i 51200:0 {image} $TEST_TMP/a.blk" ||
		fail "a state lost A, which a completed SYNCHRONIZE CACHE made durable"
	grep -q '2 states checked at 1 point, 0 failing' <<<"$OUT" || fail "$OUT"
	run "$CRASH" check "$TEST_TMP/rec" \
		--cmd "cmp -s -n 512 -i 102400:0 {image} $TEST_TMP/b.blk"
	grep -q '2 states checked at 1 point, 1 failing' <<<"$OUT" ||
		fail "B is not in doubt: $OUT"
	grep -q 'task 3 (nexus 0, opcode 0x8a, LBA 200 +1): dropped at 200' <<<"$OUT" ||
		fail "the failing state does not shrink to B dropped"
	ok "A durable after SYNCHRONIZE CACHE in every state; B's loss found and shrunk to B"
}

flush_ignore_promises_nothing() {
	known_sequence "flush = ignore"
	run "$CRASH" states "$TEST_TMP/rec" || fail "tcq-crash states failed"
	grep -q '2 blocks in doubt from 2 writes' <<<"$OUT" ||
		fail "with flush = ignore, A should be in doubt too"
	grep -q '^4 states' <<<"$OUT" || fail "expected 4 states"
	ok "a swallowed SYNCHRONIZE CACHE makes nothing durable: A and B in doubt, 4 states"
}

served_state_reads_as_its_image() {
	known_sequence
	run "$CRASH" image "$TEST_TMP/rec" 1 "$TEST_TMP/s1.img" || fail "image"
	has_block "$TEST_TMP/s1.img" 100 aa || fail "state 1 lost A"
	{
		printf '[global]\nlisten = 127.0.0.1:0\n[target %s]\n[lun %s 0]\n' "$IQN" "$IQN"
		printf 'backend = crash:record=%s,state=1\n' "$TEST_TMP/rec"
	} >"$TEST_TMP/serve.conf"
	start_tcqd -c "$TEST_TMP/serve.conf"
	run qemu-img convert -f raw -O raw "$TCQD_URL" "$TEST_TMP/served.img" ||
		fail "qemu-img could not read the crash LUN"
	cmp "$TEST_TMP/served.img" "$TEST_TMP/s1.img" ||
		fail "the served state differs from tcq-crash image's"
	run "$SCSICMD" "$TCQD_URL" write 0 1 11 nofua
	grep -q 'key=0x7 asc=0x27 ascq=0x00' <<<"$OUT" ||
		fail "a write to a crash state was not refused WRITE PROTECTED: $OUT"
	stop_tcqd
	ok "the crash backend serves state 1 as tcq-crash image writes it, read-only"
}

bad_recordings_and_states_refused() {
	local rc size
	known_sequence
	rc=0; run "$CRASH" image "$TEST_TMP/rec" 7 "$TEST_TMP/x.img" || rc=$?
	[ "$rc" = 2 ] && grep -q 'there are 2 states' <<<"$OUT" ||
		fail "an unknown state: status $rc: $OUT"
	[ ! -e "$TEST_TMP/x.img" ] || fail "a refused image was written"
	size=$(stat -c %s "$TEST_TMP/rec")
	head -c $((size - 7)) "$TEST_TMP/rec" >"$TEST_TMP/trunc"
	cp "$TEST_TMP/rec.base" "$TEST_TMP/trunc.base" 2>/dev/null
	rc=0; run "$CRASH" info "$TEST_TMP/trunc" || rc=$?
	[ "$rc" = 2 ] && grep -q 'truncated\|corrupt' <<<"$OUT" ||
		fail "a truncated recording: status $rc: $OUT"
	cp "$TEST_TMP/rec" "$TEST_TMP/bad"
	# a byte of the last record's text (before its 4 bytes of CRC)
	printf '\x5a' | dd of="$TEST_TMP/bad" bs=1 seek=$((size - 6)) conv=notrunc 2>/dev/null
	rc=0; run "$CRASH" states "$TEST_TMP/bad" || rc=$?
	[ "$rc" = 2 ] && grep -q 'corrupt (CRC)' <<<"$OUT" ||
		fail "a corrupt recording: status $rc: $OUT"
	{
		printf '[global]\nlisten = 127.0.0.1:0\n[target %s]\n[lun %s 0]\n' "$IQN" "$IQN"
		printf 'backend = crash:record=%s,state=0\nsize = 8M\n' "$TEST_TMP/rec"
	} >"$TEST_TMP/bad.conf"
	rc=0; run "$TCQD" -c "$TEST_TMP/bad.conf" || rc=$?
	[ "$rc" != 0 ] && grep -q 'records a LUN of 16777216 bytes' <<<"$OUT" ||
		fail "a crash LUN of another size: status $rc: $OUT"
	ok "unknown state (status 2), truncated and corrupt recordings, a LUN of another size: refused by name"
}

full_recording_keeps_serving() {
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	crash_conf "$TEST_TMP/tcqd.conf" "record_max = 256K"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	# tcq-bench exits 1 on any error or verify mismatch
	run "$BENCH" --quiet --rw randwrite,read --bs 4k --depth 8 --runtime 2 \
		--verify "$TCQD_URL" || fail "tcq-bench failed once the recording was full: $OUT"
	# (the whole log: this check's tcqd wrote it from its start)
	wait_until 20 grep -q "full: record_max 262144 bytes reached; the LUN goes on serving" \
		"$TCQD_LOG" || fail "no log line for the full recording"
	stop_tcqd
	run "$CRASH" info "$TEST_TMP/rec" || fail "tcq-crash info on a full recording"
	grep -q '^end: full' <<<"$OUT" || fail "the recording does not end full: $OUT"
	[ "$(stat -c %s "$TEST_TMP/rec")" -le 262144 ] ||
		fail "the recording is larger than record_max"
	ok "a full recording ends (REC_END full, the log), within record_max; a verified load loses nothing"
}

# The recorder's ring starts at 4 MiB (scsi/record_priv.h) and grows for
# a record that does not fit: 5 MiB writes, four in flight, so they wait
# for the ring to grow, then for room while the writer writes the others.
large_writes_grow_the_ring() {
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	crash_conf "$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	run "$BENCH" --quiet --rw randwrite --bs 5m --depth 4 --ios 6 \
		--verify "$TCQD_URL" || fail "tcq-bench: $OUT"
	stop_tcqd
	run "$CRASH" info "$TEST_TMP/rec" || fail "tcq-crash info failed"
	grep -q '^end: stopped' <<<"$OUT" || fail "the recording did not run to tcqd's stop: $OUT"
	grep -q '0x2a x[1-9]' <<<"$OUT" || fail "no write recorded: $OUT"
	run "$CRASH" image "$TEST_TMP/rec" all "$TEST_TMP/all.img" ||
		fail "tcq-crash image failed"
	cmp "$TEST_TMP/all.img" "$TEST_TMP/lun0.img" ||
		fail "the state 'everything written' differs from the LUN's file"
	ok "5 MiB writes, four at once, past a 4 MiB ring: recorded whole, replayed they are the LUN byte for byte"
}

# plain_conf FILE: a 64 MiB LUN, not recording, with a control socket
# (64 MiB: 2 s of random 4K writes do not overwrite every block, so a
# write the recording missed shows).
plain_conf() {
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK"
		printf '[target %s]\n[lun %s 0]\n' "$IQN" "$IQN"
		printf 'path = %s\nsize = 64M\ncreate = yes\n' "$TEST_TMP/lun0.img"
	} >"$1"
}

# ctl ARGS...: tcqctl on this tcqd ($OUT, status).
ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }

live_record_start_under_load_is_faithful() {
	local pid rc=0 before
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	plain_conf "$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	# content before the recording: the base must hold it
	run "$BENCH" --quiet --rw randwrite --bs 4k,64k --depth 8 --runtime 1 \
		"$TCQD_URL" || fail "tcq-bench (before): $OUT"
	# 32 writes in flight while the recording starts: the ones that wait
	# for the LUN to go still must be recorded when they start
	before=$(logins)
	"$BENCH" --quiet --rw randwrite --bs 4k --depth 32 --runtime 2 \
		--verify "$TCQD_URL" >"$TEST_TMP/bench.out" 2>&1 &
	pid=$!
	wait_logins $((before + 1))
	wait_load_running "$SOCK" 100	# the load runs: its writes are in flight
	ctl record start "$IQN/0" "$TEST_TMP/rec" max=1G ||
		fail "record start: $OUT"
	grep -q "recording $IQN/0 into $TEST_TMP/rec (at most 1073741824 bytes)" <<<"$OUT" ||
		fail "$OUT"
	ctl mark "$IQN/0" in the middle of the load || fail "mark: $OUT"
	ctl stats "$IQN/0"
	grep -q "recording  into $TEST_TMP/rec" <<<"$OUT" ||
		fail "tcqctl stats does not show the recording: $OUT"
	ctl metrics
	grep -q "^tcq_lun_recording{target=\"$IQN\",lun=\"0\"} 1" <<<"$OUT" ||
		fail "no tcq_lun_recording 1 in the metrics"
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] || fail "tcq-bench --verify across record start: $(cat "$TEST_TMP/bench.out")"
	ctl record stop "$IQN/0" || fail "record stop: $OUT"
	grep -q '^stopped: [0-9]* records' <<<"$OUT" || fail "$OUT"
	run "$CRASH" info "$TEST_TMP/rec" || fail "tcq-crash info: $OUT"
	grep -q '^mark at record [0-9]*: in the middle of the load$' <<<"$OUT" ||
		fail "the mark is not in the recording: $OUT"
	grep -q '^base: .*rec.base$' <<<"$OUT" || fail "no base copied: $OUT"
	run "$CRASH" image "$TEST_TMP/rec" all "$TEST_TMP/all.img" ||
		fail "tcq-crash image: $OUT"
	cmp "$TEST_TMP/all.img" "$TEST_TMP/lun0.img" ||
		fail "base + recording started under load differ from the LUN's file"
	stop_tcqd
	ok "record start under a QD32 write load: base + recording replay to the LUN byte for byte; the mark, tcqctl stats and the metric show it"
}

record_commands_refuse_bad_input() {
	rm -f "$TEST_TMP/lun0.img" "$TEST_TMP"/rec*
	plain_conf "$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	ctl mark "$IQN/0" nothing here && fail "a mark on a LUN that does not record was taken"
	grep -q 'is not recording' <<<"$OUT" || fail "mark: $OUT"
	ctl record stop "$IQN/0" && fail "record stop on a LUN that does not record"
	grep -q 'is not recording' <<<"$OUT" || fail "record stop: $OUT"
	ctl record start "$IQN/0" "$TEST_TMP/rec" max=lots && fail "max=lots taken"
	grep -q 'max' <<<"$OUT" || fail "max=lots: $OUT"
	ctl record start "$IQN/0" "$TEST_TMP/no/such/dir/rec" &&
		fail "a recording into a missing directory started"
	grep -q "$TEST_TMP/no/such/dir/rec" <<<"$OUT" || fail "the path is not named: $OUT"
	ctl record start "$IQN/9" "$TEST_TMP/rec" && fail "LUN 9 does not exist"
	# the LUN was released after each refusal: it serves
	run "$SCSICMD" "$TCQD_URL" write 10 1 5a nofua
	grep -q '^GOOD' <<<"$OUT" || fail "the LUN does not serve after the refusals: $OUT"
	ctl record start "$IQN/0" "$TEST_TMP/rec" || fail "record start: $OUT"
	ctl record start "$IQN/0" "$TEST_TMP/rec2" && fail "a second recording started"
	grep -q 'records already' <<<"$OUT" || fail "second start: $OUT"
	[ ! -e "$TEST_TMP/rec2" ] || fail "the refused recording left a file"
	stop_tcqd
	run "$CRASH" info "$TEST_TMP/rec" || fail "the recording is unreadable: $OUT"
	grep -q '^end: stopped' <<<"$OUT" || fail "tcqd's stop did not end it: $OUT"
	ok "mark and stop without a recording, max=lots, a missing directory, an unknown LUN, a second start: refused by name; the LUN serves on"
}

CHECKS=(
	recording_replays_to_the_lun
	sync_makes_a_durable_and_b_in_doubt
	flush_ignore_promises_nothing
	served_state_reads_as_its_image
	bad_recordings_and_states_refused
	full_recording_keeps_serving
	large_writes_grow_the_ring
	live_record_start_under_load_is_faithful
	record_commands_refuse_bad_input
)
run_checks "$@"
